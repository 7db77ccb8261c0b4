import Courier
import Foundation

/// A request's answers as its `response` handler receives them, counted: a test awaits the first,
/// and checks ``calls`` once the session is invalidated, when a second call would have come.
final class HandlerResponses: Sendable {
    /// How many times the handler ran.
    let calls = CallCounter()
    private let stream: AsyncStream<DataResponse<Data?, CourierError>>

    /// Adds a `response` handler to `request`.
    init(of request: DataRequest) {
        let (stream, continuation) = AsyncStream<DataResponse<Data?, CourierError>>.makeStream()
        self.stream = stream
        request.response { [calls] response in
            calls.increment()
            continuation.yield(response)
        }
    }

    /// The handler's first answer.
    func first() async -> DataResponse<Data?, CourierError>? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}
