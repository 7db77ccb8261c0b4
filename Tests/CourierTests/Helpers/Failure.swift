import Courier
import CourierTestSupport
import Testing

/// The error `request` fails with, or `nil` if it succeeds. A request still running after
/// `seconds` is recorded as an issue (a hang is a failure too) and gives `nil`.
func failure(of request: DataRequest, within seconds: Double = 30) async -> CourierError? {
    let result = await value(within: seconds) { await request.serializingData().result }
    guard let result else {
        Issue.record("the request never ended")
        return nil
    }
    if case .failure(let error) = result { return error }
    return nil
}
