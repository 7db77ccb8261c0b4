import Foundation

// Alamofire's response transforms: a new response with the same request, head, body and metrics,
// and the result changed. For a value or error computed after serialization, when a serializer
// of its own would be too much.
extension DataResponse {
    /// This response with its value passed through `transform`; a failure stays as it is.
    ///
    /// ```swift
    /// let names = response.map { users in users.map(\.name) }
    /// ```
    public func map<NewSuccess: Sendable>(_ transform: (Success) -> NewSuccess) -> DataResponse<NewSuccess, Failure> {
        replacingResult(result.map(transform))
    }

    /// This response with its value passed through `transform`, whose error, if it throws,
    /// becomes the failure.
    public func tryMap<NewSuccess: Sendable>(
        _ transform: (Success) throws -> NewSuccess
    ) -> DataResponse<NewSuccess, any Error> {
        replacingResult(result.tryMap(transform))
    }

    /// This response with its error passed through `transform`; a success stays as it is.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DataResponse<Success, NewFailure> {
        replacingResult(result.mapError(transform))
    }

    /// This response with its error passed through `transform`, whose own error, if it throws,
    /// becomes the failure.
    public func tryMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> DataResponse<Success, any Error> {
        replacingResult(result.tryMapError(transform))
    }
}
