/** What a build or deploy log line is: shared by the log's SQL, its wire shapes, the pipeline's writer and the CLI. */

export type LogType = "build" | "deploy";
export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A line to store: the pipeline writes these through LogService.append. */
export interface NewLogLine {
  workspaceId: string;
  deploymentId: string;
  revisionId: string;
  type: LogType;
  level: LogLevel;
  message: string;
  timestamp: Date;
}
