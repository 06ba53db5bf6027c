/** One ready-to-run operation: a GraphiQL tab, a README example, a smoke test. */
export interface ExampleOperation {
  readonly name: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}
