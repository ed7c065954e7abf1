import ts from "typescript";
import type { GraphTypeReader } from "./graph-types.ts";

/** A graph used as a node, at `namespace` (node names from the root graph down). */
interface SubgraphSite {
  namespace: string[];
  /** The subgraph's compiled graph type. */
  type: ts.Type;
  at: ts.Node;
}

/**
 * Finds the subgraphs of a graph in its source: `addNode("name", subgraph)` calls (or
 * nodes whose function calls a graph), both in a builder chain and in statements on a
 * builder variable (`workflow.addNode(...)`), followed into subgraphs declared in
 * other variables or imported from other files. Keys match the namespaces LangGraph
 * reports at run time (`child`, `child|grandchild`), because the node name is both.
 */
export class SubgraphFinder {
  private readonly visited = new Set<ts.Node>();

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly reader: GraphTypeReader,
  ) {}

  find(declaration: ts.Node, namespace: string[] = [], depth = 0): SubgraphSite[] {
    if (depth > 6 || this.visited.has(declaration)) return [];
    this.visited.add(declaration);
    const sites: SubgraphSite[] = [];
    for (const call of this.addNodeCalls(declaration)) {
      for (const [name, value] of nodeArguments(call)) {
        const found = this.graphIn(value);
        if (!found) continue;
        const site = [...namespace, name];
        sites.push({ namespace: site, type: found.type, at: found.node });
        const target = this.declarationOf(found.node);
        if (target) sites.push(...this.find(target, site, depth + 1));
      }
    }
    return sites;
  }

  /** `addNode` calls that build the graph declared by `declaration`. */
  private addNodeCalls(declaration: ts.Node): ts.CallExpression[] {
    const body = ts.isVariableDeclaration(declaration) ? declaration.initializer : declaration;
    if (!body) return [];
    const calls = collect(body, isAddNodeCall);
    // `const graph = workflow.compile()`: the nodes were added to `workflow` by statements.
    const builder = rootIdentifier(body);
    const builderSymbol = builder && this.symbolOf(builder);
    const builderDeclaration = builderSymbol?.valueDeclaration;
    if (!builderSymbol || !builderDeclaration || builderDeclaration === declaration) return calls;
    const onBuilder = (node: ts.Node): node is ts.CallExpression => {
      if (!isAddNodeCall(node)) return false;
      const receiver = rootIdentifier((node.expression as ts.PropertyAccessExpression).expression);
      return !!receiver && this.symbolOf(receiver) === builderSymbol;
    };
    return [...calls, ...collect(builderDeclaration.getSourceFile(), onBuilder).filter((c) => !calls.includes(c))];
  }

  /** The graph a node value stands for: the value itself, or the first graph a node function uses. */
  private graphIn(value: ts.Expression): { type: ts.Type; node: ts.Node } | undefined {
    if (ts.isFunctionLike(value)) {
      for (const identifier of collect(value, ts.isIdentifier)) {
        const found = this.graphAt(identifier);
        if (found) return found;
      }
      return undefined;
    }
    return this.graphAt(value);
  }

  private graphAt(node: ts.Node): { type: ts.Type; node: ts.Node } | undefined {
    const type = this.reader.compiledGraph(this.checker.getTypeAtLocation(node), node);
    return type ? { type, node } : undefined;
  }

  /** Where the value behind an identifier is declared (through imports), to look for its own subgraphs. */
  private declarationOf(node: ts.Node): ts.Node | undefined {
    const identifier = ts.isIdentifier(node) ? node : rootIdentifier(node);
    return identifier ? this.symbolOf(identifier)?.valueDeclaration : undefined;
  }

  private symbolOf(identifier: ts.Identifier): ts.Symbol | undefined {
    const symbol = this.checker.getSymbolAtLocation(identifier);
    return symbol && symbol.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(symbol) : symbol;
  }
}

function isAddNodeCall(node: ts.Node): node is ts.CallExpression {
  return ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "addNode";
}

/** `addNode("a", x)`, `addNode({ a: x })` and `addNode([["a", x]])`, as name and value pairs. */
function nodeArguments(call: ts.CallExpression): Array<[string, ts.Expression]> {
  const [first, second] = call.arguments;
  if (first && ts.isStringLiteralLike(first) && second) return [[first.text, second]];
  if (first && ts.isObjectLiteralExpression(first)) {
    return first.properties.flatMap((p): Array<[string, ts.Expression]> => {
      if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteralLike(p.name))) return [[p.name.text, p.initializer]];
      if (ts.isShorthandPropertyAssignment(p)) return [[p.name.text, p.name]];
      return [];
    });
  }
  if (first && ts.isArrayLiteralExpression(first)) {
    return first.elements.flatMap((e): Array<[string, ts.Expression]> => {
      if (!ts.isArrayLiteralExpression(e)) return [];
      const [name, value] = e.elements;
      return name && value && ts.isStringLiteralLike(name) ? [[name.text, value]] : [];
    });
  }
  return [];
}

/** The identifier a chain starts from: `workflow` in `workflow.addNode(...).compile()`, `await x`, `(x)`. */
function rootIdentifier(node: ts.Node): ts.Identifier | undefined {
  let current: ts.Node = node;
  for (;;) {
    if (ts.isIdentifier(current)) return current;
    if (
      ts.isCallExpression(current) ||
      ts.isPropertyAccessExpression(current) ||
      ts.isParenthesizedExpression(current) ||
      ts.isAwaitExpression(current) ||
      ts.isNonNullExpression(current) ||
      ts.isAsExpression(current)
    ) {
      current = current.expression;
      continue;
    }
    return undefined;
  }
}

function collect<T extends ts.Node>(root: ts.Node, match: (node: ts.Node) => node is T): T[] {
  const found: T[] = [];
  const visit = (node: ts.Node) => {
    if (match(node)) found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return found;
}
