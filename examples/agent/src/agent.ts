import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { EchoChatModel } from "./echo-model.ts";

const model = new EchoChatModel({});

/** The bundled example: one node that answers with a streaming chat model. */
export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();
