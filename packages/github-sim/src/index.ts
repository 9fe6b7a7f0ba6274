/**
 * zekt-github-sim: a local, in-memory stand-in for the parts of GitHub a GitHub App backend uses.
 * This file is the whole public surface; everything else is internal.
 */
export type { AppOptions } from './app-identity.js';
export type { Clock } from './clock.js';
export { createGitHubSimulator } from './simulator.js';
export type { GitHubSimulator, SimulatorOptions } from './simulator-api.js';
export type {
  ConsumerCall,
  ConsumerRunRecord,
  ConsumerWorkflowInput,
  ConsumerWorkflowTriggers,
  ConsumerWorkflowZekt,
  CreateInstallationInput,
  DispatchRecord,
  Fault,
  FaultRule,
  FaultRuleStatus,
  Installation,
  InstallationChange,
  InstallationPermissions,
  JournalAuth,
  JournalEntry,
  MessageInput,
  MessageResult,
  MintOidcTokenInput,
  PrivateUser,
  Repository,
  RerunWorkflowInput,
  RunWorkflowInput,
  RunWorkflowResult,
  SimpleUser,
  SimulatedApp,
  WebhookDeliveryRecord,
  WebhookDropRule,
  WebhookDropRuleStatus,
  WorkflowConclusion,
  WorkflowDispatchInputDefinition,
  WorkflowDispatchRecord,
  WorkflowRun,
} from './types.js';
