import ts from "typescript";
import type { Field } from "./graph-types.ts";
import { MESSAGE_DEFINITIONS } from "./message-definitions.ts";

export type JsonSchema = Record<string, unknown>;

/**
 * Turns TypeScript types (as the compiler resolved them) into JSON Schema (draft-07),
 * for the state, input, output and config of graphs declared without zod.
 *
 * Choices, and why:
 * - LangChain messages (any class descending from `BaseMessage`) become a reference to
 *   the `BaseMessage` definition, a `oneOf` over the message classes as the vendor
 *   writes it (message-definitions.ts); a list of them is marked `langgraph_type: "messages"`,
 *   the mark LangGraph's own zod and StateSchema helpers put on message channels.
 * - The `OverwriteValue` member of a reducer's update type is left out: it is a way to
 *   bypass the reducer, not a shape of data.
 * - `undefined` in a union makes a property optional instead of appearing in the schema.
 * - A type met again while it is being expanded (a recursive type) becomes `{}`, and
 *   nesting stops at MAX_DEPTH: a schema is for forms and docs, not proofs.
 * - Functions (methods, callbacks) have no JSON form and are left out.
 */
const MAX_DEPTH = 8;

const MESSAGE_REF = { $ref: "#/definitions/BaseMessage" };

export class TypeSchemaWriter {
  /** Set once the schema being written refers to the BaseMessage definition. */
  private usedMessages = false;
  private readonly expanding = new Set<ts.Type>();
  /** The declaration of the property being written: where its unions are spelled out, in order. */
  private declaration?: ts.Node;

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly at: ts.Node,
  ) {}

  /**
   * The schema of graph channels (state, input, output or context fields): none is
   * required at this level (a channel may hold nothing yet), whatever its type says.
   */
  channels(fields: Field[]): JsonSchema {
    this.usedMessages = false;
    const properties = this.properties(fields, 0);
    const schema: JsonSchema = { type: "object" };
    if (properties.length) schema.properties = Object.fromEntries(properties.map((p) => [p.name, p.schema]));
    if (this.usedMessages) schema.definitions = MESSAGE_DEFINITIONS;
    schema.$schema = "http://json-schema.org/draft-07/schema#";
    return schema;
  }

  /** Schemas of fields, in declaration order, and which of them may be missing. */
  private properties(fields: Field[], depth: number): Array<{ name: string; schema: JsonSchema; optional: boolean }> {
    const out: Array<{ name: string; schema: JsonSchema; optional: boolean }> = [];
    for (const { symbol, type: propertyType } of fields) {
      if (isFunction(propertyType)) continue;
      const members = unionMembers(propertyType);
      const optional = (symbol.flags & ts.SymbolFlags.Optional) !== 0 || members.some((m) => m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void));
      const outer = this.declaration;
      this.declaration = symbol.valueDeclaration ?? symbol.declarations?.[0] ?? outer;
      let schema: JsonSchema;
      try {
        schema = this.write(propertyType, depth + 1);
      } finally {
        this.declaration = outer;
      }
      const doc = ts.displayPartsToString(symbol.getDocumentationComment(this.checker)).trim();
      out.push({ name: symbol.getName(), schema: doc && !("description" in schema) ? { ...schema, description: doc } : schema, optional });
    }
    return out;
  }

  write(type: ts.Type, depth = 0): JsonSchema {
    if (depth > MAX_DEPTH) return {};
    const flags = type.flags;
    if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.Never | ts.TypeFlags.TypeParameter)) return {};
    if (flags & ts.TypeFlags.Union) return this.union(type as ts.UnionType, depth);
    if (flags & ts.TypeFlags.StringLiteral) return { type: "string", const: (type as ts.StringLiteralType).value };
    if (flags & ts.TypeFlags.NumberLiteral) return { type: "number", const: (type as ts.NumberLiteralType).value };
    if (flags & ts.TypeFlags.BooleanLiteral) return { type: "boolean", const: this.checker.typeToString(type) === "true" };
    if (flags & (ts.TypeFlags.String | ts.TypeFlags.TemplateLiteral | ts.TypeFlags.StringMapping)) return { type: "string" };
    if (flags & ts.TypeFlags.Number) return { type: "number" };
    if (flags & (ts.TypeFlags.BigInt | ts.TypeFlags.BigIntLiteral)) return { type: "integer" };
    if (flags & ts.TypeFlags.Boolean) return { type: "boolean" };
    if (flags & ts.TypeFlags.Null) return { type: "null" };
    if (flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) return {};
    if (!(flags & ts.TypeFlags.Object) && !(flags & ts.TypeFlags.Intersection)) return {};
    if (this.isMessage(type)) {
      this.usedMessages = true;
      return { ...MESSAGE_REF };
    }
    const array = this.arrayElement(type);
    if (array) return this.array(array, depth);
    if (this.checker.isTupleType(type)) {
      const items = this.checker.getTypeArguments(type as ts.TypeReference).map((t) => this.write(t, depth + 1));
      return { type: "array", items, minItems: items.length, maxItems: items.length };
    }
    const name = type.getSymbol()?.getName();
    if (name === "Date") return { type: "string", format: "date-time" };
    if (isFunction(type)) return {};
    if (this.expanding.has(type)) return {};
    this.expanding.add(type);
    try {
      return { type: "object", ...this.object(type, depth) };
    } finally {
      this.expanding.delete(type);
    }
  }

  private object(type: ts.Type, depth: number): JsonSchema {
    const schema: JsonSchema = {};
    const fields = this.checker.getPropertiesOfType(type).map((symbol) => ({ symbol, type: this.checker.getTypeOfSymbolAtLocation(symbol, this.at) }));
    const props = this.properties(fields, depth);
    if (props.length) schema.properties = Object.fromEntries(props.map((p) => [p.name, p.schema]));
    const required = props.filter((p) => !p.optional).map((p) => p.name);
    if (required.length) schema.required = required;
    const index = this.checker.getIndexInfosOfType(type).find((info) => info.keyType.flags & (ts.TypeFlags.String | ts.TypeFlags.Number));
    if (index) schema.additionalProperties = this.write(index.type, depth + 1);
    return schema;
  }

  private array(element: ts.Type, depth: number): JsonSchema {
    const items = this.write(element, depth + 1);
    const schema: JsonSchema = { type: "array", items };
    if (unionMembers(element).some((m) => this.isMessage(m))) {
      this.usedMessages = true;
      return { type: "array", items: { ...MESSAGE_REF }, langgraph_type: "messages" };
    }
    return schema;
  }

  private union(type: ts.UnionType, depth: number): JsonSchema {
    const members = this.inDeclarationOrder(type).filter((m) => !(m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) && !isOverwrite(m));
    // A reducer of messages takes one message or a list (Messages): written as the list.
    const messageList = members.find((m) => {
      const element = this.arrayElement(m);
      return element && unionMembers(element).some((e) => this.isMessage(e));
    });
    if (messageList) return this.write(messageList, depth);
    if (members.some((m) => this.isMessage(m))) {
      this.usedMessages = true;
      return { ...MESSAGE_REF };
    }
    const literals = literalEnum(members);
    if (literals) return literals;
    const booleans = members.filter((m) => m.flags & ts.TypeFlags.BooleanLiteral);
    const others = members.filter((m) => !(m.flags & ts.TypeFlags.BooleanLiteral));
    const schemas = others.map((m) => this.write(m, depth));
    // `boolean` is the union true | false; written once, as the type.
    if (booleans.length === 2) schemas.push({ type: "boolean" });
    else if (booleans.length === 1) schemas.push(this.write(booleans[0]!, depth));
    const unique = dedupe(schemas);
    if (unique.length === 0) return {};
    if (unique.length === 1) return unique[0]!;
    if (unique.some((s) => Object.keys(s).length === 0)) return {};
    // Plain types only (string | null, ...): one `type` list, as typescript-json-schema writes them.
    if (unique.every((s) => Object.keys(s).length === 1 && typeof s.type === "string")) return { type: unique.map((s) => s.type) };
    return { anyOf: unique };
  }

  /**
   * A union's members as written. The checker keeps them in the order their types were
   * first created anywhere in the program (`"anthropic" | "openai"` comes out reversed
   * when "openai" appeared earlier), so the order is taken from the union as spelled:
   * in the declaration of the property being written, or of the union's type alias.
   * Members not found there keep the checker's order, after the others.
   */
  private inDeclarationOrder(type: ts.UnionType): ts.Type[] {
    const places = [type.aliasSymbol?.declarations?.[0], this.declaration].filter((n): n is ts.Node => !!n);
    for (const place of places) {
      for (const written of collectUnionNodes(place)) {
        const position = new Map<ts.Type, number>();
        written.types.forEach((node, index) => {
          for (const member of unionMembers(this.checker.getTypeFromTypeNode(node))) if (!position.has(member)) position.set(member, index);
        });
        const found = type.types.filter((m) => position.has(m));
        if (found.length < 2 || found.length < type.types.filter((m) => !(m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void))).length) continue;
        const rest = type.types.filter((m) => !position.has(m));
        return [...found.sort((a, b) => position.get(a)! - position.get(b)!), ...rest];
      }
    }
    return type.types;
  }

  private arrayElement(type: ts.Type): ts.Type | undefined {
    if (this.checker.isArrayType(type)) return this.checker.getTypeArguments(type as ts.TypeReference)[0];
    return undefined;
  }

  /** An instance of a LangChain message class: named `BaseMessage` somewhere up its class chain. */
  private isMessage(type: ts.Type): boolean {
    if (!(type.flags & ts.TypeFlags.Object)) return false;
    const seen = new Set<ts.Type>();
    const visit = (t: ts.Type): boolean => {
      if (seen.has(t)) return false;
      seen.add(t);
      const symbol = t.getSymbol();
      if (symbol?.getName() === "BaseMessage" && fromLangChainCore(symbol)) return true;
      const target = (t as ts.TypeReference).target ?? t;
      if (!(target.flags & ts.TypeFlags.Object) || !((target as ts.ObjectType).objectFlags & (ts.ObjectFlags.Class | ts.ObjectFlags.Interface))) return false;
      return (this.checker.getBaseTypes(target as ts.InterfaceType) ?? []).some(visit);
    };
    return visit(type);
  }
}

function fromLangChainCore(symbol: ts.Symbol): boolean {
  return (symbol.getDeclarations() ?? []).some((d) => /[\\/]@langchain[\\/]core[\\/]/.test(d.getSourceFile().fileName));
}

function unionMembers(type: ts.Type): ts.Type[] {
  return type.isUnion() ? type.types : [type];
}

function isFunction(type: ts.Type): boolean {
  return type.getCallSignatures().length > 0 && type.getProperties().every((p) => p.getName() === "prototype" || (p.flags & ts.SymbolFlags.Method) !== 0);
}

/** `OverwriteValue<T>` (`{ __overwrite__: T }`): bypasses a reducer; not a shape of the state. */
function isOverwrite(type: ts.Type): boolean {
  return type.getProperties().some((p) => p.getName() === "__overwrite__");
}

/** A union of string (or number) literals, as `enum`. */
function literalEnum(members: ts.Type[]): JsonSchema | undefined {
  if (members.length < 2) return undefined;
  if (members.every((m) => m.flags & ts.TypeFlags.StringLiteral)) return { type: "string", enum: members.map((m) => (m as ts.StringLiteralType).value) };
  if (members.every((m) => m.flags & ts.TypeFlags.NumberLiteral)) return { type: "number", enum: members.map((m) => (m as ts.NumberLiteralType).value) };
  return undefined;
}

function dedupe(schemas: JsonSchema[]): JsonSchema[] {
  const seen = new Set<string>();
  return schemas.filter((s) => {
    const key = JSON.stringify(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Every union spelled out in a declaration (`a: "x" | "y"`, `Annotation<"x" | "y">`), outermost first. */
function collectUnionNodes(root: ts.Node): ts.UnionTypeNode[] {
  const found: ts.UnionTypeNode[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isUnionTypeNode(node)) found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(root);
  return found;
}
