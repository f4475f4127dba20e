// A view of an object with some members replaced, for the per-principal views of shared services
// (policyViews.ts, policyOptimization.ts): what is not replaced is the object's own.
/**
 * `target` with some members replaced (each computed on every read); the rest are its own, methods
 * bound to it (its private fields need it as `this`).
 */
export function overlay<T extends object>(target: T, members: { [K in keyof T]?: () => T[K] }): T {
  return new Proxy(target, {
    get(object, property) {
      const replaced = members[property as keyof T];
      if (replaced) return replaced();
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}
