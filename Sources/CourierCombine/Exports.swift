@_exported import Courier

// Apple's Combine where there is one; OpenCombine (the same API) on Linux. Re-exported so that
// `import CourierCombine` is all a caller needs for `sink`, `AnyCancellable` and the rest.
#if canImport(Combine)
@_exported import Combine
#else
@_exported import OpenCombine
#endif
