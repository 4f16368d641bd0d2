/**
 * Installs `Promise.withResolvers` when the runtime lacks it (Node 20).
 *
 * aws-local-stepfunctions 3.0.0 declares Node >= 22 and calls `Promise.withResolvers` in every Task
 * state; importing this module first lets it run unchanged on Node 20.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const ctor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

if (typeof ctor.withResolvers !== 'function') {
  ctor.withResolvers = <T>(): Resolvers<T> => {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
