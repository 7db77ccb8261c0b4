import Foundation

// Alamofire's response transforms for downloads: the same request, head, file, resume data and
// metrics, with the result changed.
extension DownloadResponse {
    /// This response with its value passed through `transform`; a failure stays as it is.
    public func map<NewSuccess: Sendable>(
        _ transform: (Success) -> NewSuccess
    ) -> DownloadResponse<NewSuccess, Failure> {
        replacingResult(result.map(transform))
    }

    /// This response with its value passed through `transform`, whose error, if it throws,
    /// becomes the failure.
    public func tryMap<NewSuccess: Sendable>(
        _ transform: (Success) throws -> NewSuccess
    ) -> DownloadResponse<NewSuccess, any Error> {
        replacingResult(result.tryMap(transform))
    }

    /// This response with its error passed through `transform`; a success stays as it is.
    public func mapError<NewFailure: Error>(
        _ transform: (Failure) -> NewFailure
    ) -> DownloadResponse<Success, NewFailure> {
        replacingResult(result.mapError(transform))
    }

    /// This response with its error passed through `transform`, whose own error, if it throws,
    /// becomes the failure.
    public func tryMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> DownloadResponse<Success, any Error> {
        replacingResult(result.tryMapError(transform))
    }

    private func replacingResult<NewSuccess, NewFailure>(
        _ result: Result<NewSuccess, NewFailure>
    ) -> DownloadResponse<NewSuccess, NewFailure> {
        DownloadResponse<NewSuccess, NewFailure>(
            request: request,
            head: head,
            fileURL: fileURL,
            resumeData: resumeData,
            metrics: metrics,
            serializationDuration: serializationDuration,
            result: result
        )
    }
}
