/**
 * The reads custom auth's route guards match their filters against, gathered in one
 * place: each is a statement of its resource's repository (metadata by id; `undefined`
 * when there is no such row, and the route then answers its own 404).
 */
export { assistantMetadata } from "../assistants/repository.ts";
export { cronMetadata } from "../crons/repository.ts";
export { threadOfRun } from "../runs/repository.ts";
export { threadMetadata } from "../threads/repository.ts";
