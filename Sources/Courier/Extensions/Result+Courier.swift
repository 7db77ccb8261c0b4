/// A result whose failure is a ``CourierError``: what Courier's responses carry. Alamofire's `AFResult`.
public typealias CourierResult<Success> = Result<Success, CourierError>

/// A data response whose failure is a ``CourierError``. Alamofire's `AFDataResponse`.
public typealias CourierDataResponse<Success> = DataResponse<Success, CourierError>

/// A download response whose failure is a ``CourierError``. Alamofire's `AFDownloadResponse`.
public typealias CourierDownloadResponse<Success> = DownloadResponse<Success, CourierError>

/// The small helpers Alamofire keeps on `Result` (internal there), public here: reading a
/// response's outcome without a `switch`.
extension Result {
    /// Whether this is a success.
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// Whether this is a failure.
    public var isFailure: Bool { !isSuccess }

    /// The value, for a success; `nil` for a failure.
    public var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The error, for a failure; `nil` for a success.
    public var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// The success passed through `transform`; an error it throws becomes the failure, as does
    /// this result's own failure.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> Result<NewSuccess, any Error> {
        switch self {
        case .success(let value): Result<NewSuccess, any Error> { try transform(value) }
        case .failure(let error): .failure(error)
        }
    }

    /// The failure passed through `transform`; an error it throws becomes the failure. A
    /// success stays as it is.
    public func tryMapError<NewFailure: Error>(
        _ transform: (Failure) throws -> NewFailure
    ) -> Result<Success, any Error> {
        switch self {
        case .success(let value):
            return .success(value)
        case .failure(let error):
            do {
                return .failure(try transform(error))
            } catch {
                return .failure(error)
            }
        }
    }
}
