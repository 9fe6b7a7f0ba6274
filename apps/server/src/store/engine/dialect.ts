// The SQL dialect the store runs on, and what a migration is told about it: a leaf module, so the
// migrations and the store operations never import the migration list that imports them.

export type SqlDialect = 'sqlite' | 'postgres';

export interface MigrationContext {
  dialect: SqlDialect;
}
