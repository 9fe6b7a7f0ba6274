/**
 * A page of a list ordered by a key (keyset pagination): rows after `after` (the key of the last
 * row of the previous page), at most `limit` of them. Routes ask for one row more than they show
 * to know whether a next page exists.
 */
export interface KeysetPage {
  after?: readonly string[] | undefined;
  limit: number;
}
