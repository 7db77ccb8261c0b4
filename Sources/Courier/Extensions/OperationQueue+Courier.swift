import Foundation

extension OperationQueue {
    /// A queue configured in one call, for ``RequestOperation``s and other work.
    ///
    /// - Parameters:
    ///   - qualityOfService: The priority of the queue's operations.
    ///   - maxConcurrentOperationCount: How many operations run at once; by default as many as
    ///     the system sees fit.
    ///   - underlyingQueue: The dispatch queue that runs the operations, if not the system's choice.
    ///   - name: A name for debugging.
    ///   - startSuspended: Whether operations wait until `isSuspended` is set to `false`.
    public convenience init(
        qualityOfService: QualityOfService = .default,
        maxConcurrentOperationCount: Int = OperationQueue.defaultMaxConcurrentOperationCount,
        underlyingQueue: DispatchQueue? = nil,
        name: String? = nil,
        startSuspended: Bool = false
    ) {
        self.init()
        self.qualityOfService = qualityOfService
        self.maxConcurrentOperationCount = maxConcurrentOperationCount
        self.underlyingQueue = underlyingQueue
        self.name = name
        self.isSuspended = startSuspended
    }
}
