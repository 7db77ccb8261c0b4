import Foundation

/// The delegate queue of the URLSession a ``URLSessionTransport`` makes: serial, and on Linux
/// it runs each block it is given on one dispatch queue rather than wrapping it in an `Operation`.
///
/// FoundationNetworking hands its delegate every event through `addOperation(_:)` with a block:
/// three per request (the head, the body, the end). swift-corelibs-foundation makes each one a
/// `BlockOperation`, with its state changes observed and its queue's bookkeeping behind locks:
/// measured, about 30,000 instructions per block, a tenth of a request. The dispatch queue keeps
/// what the delegate relies on: one block at a time, in the order given. Operations added as
/// `Operation`s (nobody does, on this queue) still go through `OperationQueue`, serially.
///
/// On Apple platforms URLSession does not go through this method, so the queue is a plain serial
/// `OperationQueue` there.
final class DelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked Sendable: it adds no state to `OperationQueue` (which is thread-safe) but the
    // serial dispatch queue, which is.
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
