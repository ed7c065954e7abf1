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
    if (this.property(type, "~InputType", at)) return type;
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
    const [stateValues, stateUpdate] = this.stateGraphArguments(graph);
    // A graph declared with `channels` and a type parameter has no typed input or
    // output definition (they default to a bare StateDefinition): its state stands in.
    const input = this.fields(this.property(graph, "~InputType", at), at) ?? this.fields(stateUpdate, at);
    const output = this.fields(this.property(graph, "~OutputType", at), at) ?? this.fields(stateValues, at);
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

  /** S and U of CompiledStateGraph<S, U, ...>: the state's values and its update. */
  private stateGraphArguments(graph: ts.Type): [ts.Type | undefined, ts.Type | undefined] {
    const reference = graph as ts.TypeReference;
    if (!reference.target || reference.target.getSymbol()?.getName() !== "CompiledStateGraph") return [undefined, undefined];
    const [values, update] = this.checker.getTypeArguments(reference);
    return [values, update];
  }

  /**
   * A state definition (channel name → channel) as the object of its value types: a
   * channel's `ValueType`, or that of what a channel factory (such as `Annotation<T>`
   * written without a call) returns from its last signature, as LangGraph's own
   * StateType does.
   */
  private channelValues(definition: ts.Type, at: ts.Node): Field[] | undefined {
    const fields: Field[] = [];
    for (const { symbol, type: channel } of this.fields(definition, at) ?? []) {
      const signatures = channel.getCallSignatures();
      const made = signatures.length ? signatures[signatures.length - 1]!.getReturnType() : channel;
      const value = this.property(made, "ValueType", at);
      if (value) fields.push({ symbol, type: value });
    }
    return fields.length ? fields : undefined;
  }

  property(type: ts.Type, name: string, at: ts.Node): ts.Type | undefined {
    const symbol = this.checker.getPropertyOfType(type, name);
    return symbol ? this.checker.getTypeOfSymbolAtLocation(symbol, at) : undefined;
  }
}

