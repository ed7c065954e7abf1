#!/usr/bin/env node
// Slipway ships TypeScript sources and runs them through tsx's loader, so users'
// graphs written in TypeScript load the same way without a build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/index.ts");
