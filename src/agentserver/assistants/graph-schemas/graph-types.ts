import ts from "typescript";

/**
 * Finds, with the type checker, the compiled graph behind a module export and the
 * types its schemas are written from. Works on the types LangGraph.js declares
 * (CompiledStateGraph<S, U, N, I, O, C>, Pregel's `~InputType` / `~OutputType`, and
 * StateGraph's `_configSchema`), so any way of declaring state that the library types
 * (Annotation.Root, MessagesAnnotation, zod, a TypeScript interface with `channels`)
 * is read the same way.
 */
export interface Field {
  symbol: ts.Symbol;
  type: ts.Type;
}

/** The fields of each schema of a graph. */
export interface GraphFields {
  /** Every channel, as an update: what the state editor may write. */
  state?: Field[];
  input?: Field[];
  output?: Field[];
  /** The context (config) fields. */
  config?: Field[];
}

export class GraphTypeReader {
  constructor(private readonly checker: ts.TypeChecker) {}

  /** The symbol a module exports under `name`, followed through re-exports. */
  exportSymbol(file: ts.SourceFile, name: string): ts.Symbol | undefined {
    const moduleSymbol = this.checker.getSymbolAtLocation(file);
    if (!moduleSymbol) return undefined;
    const found = this.checker.getExportsOfModule(moduleSymbol).find((s) => s.getName() === name);
    return found && found.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(found) : found;
  }

  /**
   * The compiled graph a value of this type stands for: a graph, a promise of one, an
   * uncompiled StateGraph (its `compile()`), or a factory (its result), in any nesting.
   */
  compiledGraph(type: ts.Type, at: ts.Node, depth = 0): ts.Type | undefined {
    if (depth > 4) return undefined;
    if (this.property(type, "~InputType", at) || isCompiledStateGraph(type)) return type;
    const awaited = this.checker.getAwaitedType(type);
    if (awaited && awaited !== type) return this.compiledGraph(awaited, at, depth + 1);
    const compile = this.property(type, "compile", at);
    const compiled = compile?.getCallSignatures()[0]?.getReturnType();
    if (compiled) return this.compiledGraph(compiled, at, depth + 1);
    const factory = type.getCallSignatures()[0]?.getReturnType();
    return factory ? this.compiledGraph(factory, at, depth + 1) : undefined;
  }

  isGraph(type: ts.Type, at: ts.Node): boolean {
    return this.compiledGraph(type, at) !== undefined;
  }

  /** The fields a compiled graph's schemas are written from. */
  schemaFields(graph: ts.Type, at: ts.Node): GraphFields {
    const [stateValues, stateUpdate, inputDefinition, outputDefinition] = this.stateGraphArguments(graph);
    // LangGraph.js before 0.3 has no `~InputType`/`~OutputType`: its input and output
    // are the definitions I and O of CompiledStateGraph<S, U, N, I, O>. A graph declared
    // with `channels` and a type parameter has neither (they default to a bare
    // StateDefinition): its state stands in.
    const input =
      this.fields(this.property(graph, "~InputType", at), at) ??
      (inputDefinition && this.channelValues(inputDefinition, at, "UpdateType")) ??
      this.fields(stateUpdate, at);
    const output =
      this.fields(this.property(graph, "~OutputType", at), at) ??
      (outputDefinition && this.channelValues(outputDefinition, at, "ValueType")) ??
      this.fields(stateValues, at);
    const builder = this.property(graph, "builder", at);
    const configDefinition = builder && this.property(builder, "_configSchema", at);
    return {
      state: this.fields(stateUpdate, at) ?? input,
      input,
      output,
      config: configDefinition ? this.channelValues(this.checker.getNonNullableType(configDefinition), at) : undefined,
    };
  }

  /** The properties of a type with their types; undefined when it has none. */
  private fields(type: ts.Type | undefined, at: ts.Node): Field[] | undefined {
    if (!type) return undefined;
    const fields = this.checker.getPropertiesOfType(type).map((symbol) => ({ symbol, type: this.checker.getTypeOfSymbolAtLocation(symbol, at) }));
    return fields.length ? fields : undefined;
  }

  /** S, U, I and O of CompiledStateGraph<S, U, N, I, O>: the state's values and update, the input and output definitions. */
  private stateGraphArguments(graph: ts.Type): Array<ts.Type | undefined> {
    if (!isCompiledStateGraph(graph)) return [];
    const [values, update, , input, output] = this.checker.getTypeArguments(graph as ts.TypeReference);
    return [values, update, input, output];
  }

  /**
   * A state definition (channel name → channel) as the object of its value (or update)
   * types: a channel's `ValueType`, or that of what a channel factory (such as `Annotation<T>`
   * written without a call) returns from its last signature, as LangGraph's own
   * StateType does.
   */
  private channelValues(definition: ts.Type, at: ts.Node, side: "ValueType" | "UpdateType" = "ValueType"): Field[] | undefined {
    const fields: Field[] = [];
    for (const { symbol, type: channel } of this.fields(definition, at) ?? []) {
      const signatures = channel.getCallSignatures();
      const made = signatures.length ? signatures[signatures.length - 1]!.getReturnType() : channel;
      const value = this.property(made, side, at);
      if (value) fields.push({ symbol, type: value });
    }
    return fields.length ? fields : undefined;
  }

  property(type: ts.Type, name: string, at: ts.Node): ts.Type | undefined {
    const symbol = this.checker.getPropertyOfType(type, name);
    return symbol ? this.checker.getTypeOfSymbolAtLocation(symbol, at) : undefined;
  }
}

/** A CompiledStateGraph<...> of any LangGraph.js version: the class every StateGraph compiles to. */
function isCompiledStateGraph(type: ts.Type): boolean {
  const reference = type as ts.TypeReference;
  return !!reference.target && reference.target.getSymbol()?.getName() === "CompiledStateGraph";
}
