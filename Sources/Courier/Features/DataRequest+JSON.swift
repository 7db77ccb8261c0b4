import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// Calls `completionHandler` with the body read by `JSONSerialization` (see
    /// ``JSONResponseSerializer`` for the values it holds): Alamofire's deprecated `responseJSON`,
    /// kept so that code moving from Alamofire compiles and runs unchanged.
    @available(
        *,
        deprecated,
        message: "Decode a Decodable type instead: responseDecodable(of:) or serializingDecodable(_:)."
    )
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (DataResponse<any Sendable, CourierError>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                options: options
            ),
            completionHandler: completionHandler
        )
    }
}

extension DownloadRequest {
    /// Calls `completionHandler` with the file's contents read by `JSONSerialization` (see
    /// ``JSONResponseSerializer``): Alamofire's deprecated `responseJSON`, kept so that code moving
    /// from Alamofire compiles and runs unchanged.
    @available(
        *,
        deprecated,
        message: "Decode a Decodable type instead: responseDecodable(of:) or serializingDecodable(_:)."
    )
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue = .courierCallbacks,
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (DownloadResponse<any Sendable, CourierError>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                options: options
            ),
            completionHandler: completionHandler
        )
    }
}
