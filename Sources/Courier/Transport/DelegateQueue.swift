import Foundation

/// The delegate queue of the URLSession a ``URLSessionTransport`` makes: serial, and on Linux
/// it runs each block it is given on one dispatch queue rather than wrapping it in an `Operation`.
///
/// FoundationNetworking hands its delegate every event through `addOperation(_:)` with a block:
/// the head, each piece of the body, the end (and any redirect, challenge or upload progress).
/// swift-corelibs-foundation makes each one a `BlockOperation`, with its state changes observed
/// and its queue's bookkeeping behind locks: measured, about 30,000 instructions per block, a
/// tenth of a request. The dispatch queue keeps what the delegate relies on: one block at a time,
/// in the order given. FoundationNetworking uses no other part of its delegate queue (no
/// `Operation` objects, barriers, suspension or waiting), and neither does Courier; such calls
/// would not see the blocks. Inside a callback `OperationQueue.current` is `nil`, not this queue.
///
/// On Apple platforms the override is not compiled in: the queue is a plain serial
/// `OperationQueue` there.
final class DelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked Sendable, restated from `OperationQueue`: the only state added is the serial
    // dispatch queue, which is thread-safe.
    #if canImport(FoundationNetworking)
    private let serial = DispatchQueue(label: "Courier.URLSessionTransport.delegate")
    #endif

    override init() {
        super.init()
        maxConcurrentOperationCount = 1
        name = "Courier.URLSessionTransport.delegate"
    }

    #if canImport(FoundationNetworking)
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        serial.async(execute: block)
    }
    #endif
}
