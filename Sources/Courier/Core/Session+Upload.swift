import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    // MARK: - Uploading

    /// Uploads `data` to `url` (with `POST` by default) and collects the response.
    ///
    /// - Parameters:
    ///   - data: The body.
    ///   - url: Where to send it.
    ///   - method: The method; `POST` by default.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - fileManager: Removes the temporary file the request made (an encoded form) when it finishes.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    public func upload(
        _ data: Data,
        to url: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        upload(
            .data(data),
            to: url,
            method: method,
            headers: headers,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            requestModifier: requestModifier
        )
    }

    /// Uploads the file at `fileURL` to `url`, read in chunks as it is sent (with a `Content-Length`).
    ///
    /// A missing, unreadable or directory `fileURL` fails the request with
    /// ``CourierError/Kind/createUploadableFailed`` before anything is sent.
    public func upload(
        _ fileURL: URL,
        to url: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        upload(
            UploadRequest.Uploadable.file(fileURL, shouldRemove: false),
            with: convertible(url, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// Uploads what `stream` yields to `url`, chunked (its length is unknown). A stream can be
    /// read only once, so this request is never retried; to allow retries, pass a
    /// ``RequestBody/stream(length:_:)`` that opens a new stream for each attempt.
    public func upload(
        _ stream: InputStream,
        to url: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        upload(
            .stream(readingOnce: stream),
            to: url,
            method: method,
            headers: headers,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            requestModifier: requestModifier
        )
    }

    /// Uploads `body` (memory, a file, or streams made per attempt) to `url`.
    public func upload(
        _ body: RequestBody,
        to url: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        upload(
            body,
            with: convertible(url, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// Uploads `body` with the URLRequest `convertible` builds (its own `httpBody` is ignored).
    public func upload(
        _ body: RequestBody,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        upload(
            with: convertible,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        ) {
            UploadRequest.MadeBody(body: body, temporaryFile: nil)
        }
    }

    /// Uploads `data` with the URLRequest `convertible` builds, as Alamofire's `upload(_:with:)`.
    public func upload(
        _ data: Data,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        upload(
            .data(data),
            with: convertible,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// Uploads the file at `fileURL` with the URLRequest `convertible` builds, as Alamofire's
    /// `upload(_:with:)`; a file that cannot be read fails the request with
    /// ``CourierError/Kind/createUploadableFailed`` before anything is sent.
    public func upload(
        _ fileURL: URL,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        upload(
            UploadRequest.Uploadable.file(fileURL, shouldRemove: false),
            with: convertible,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// Uploads what `stream` yields with the URLRequest `convertible` builds, chunked and never
    /// retried, as Alamofire's `upload(_:with:)`.
    public func upload(
        _ stream: InputStream,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        upload(
            .stream(readingOnce: stream),
            with: convertible,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// Uploads what `uploadable` makes (once, before the first attempt) with the URLRequest
    /// `convertible` builds: the way to bring a body made by a type of your own
    /// (``UploadableConvertible``), or a ``UploadRequest/Uploadable`` as Alamofire names them.
    public func upload(
        _ uploadable: any UploadableConvertible,
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        // A type of the caller's may take long to make its body (writing a file): not on the
        // caller's thread.
        upload(
            with: convertible,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            makesUploadableSlowly: !(uploadable is UploadRequest.Uploadable)
        ) { try uploadable.createUploadable().madeBody(removingWith: fileManager) }
    }

    /// Uploads `upload`: it builds the request and makes the body (``UploadConvertible``).
    public func upload(
        _ upload: any UploadConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        self.upload(
            upload as any UploadableConvertible,
            with: upload,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    // MARK: - Making upload requests

    func convertible(
        _ url: any URLConvertible,
        method: HTTPMethod,
        headers: HTTPHeaders?,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)?,
        encode: (@Sendable (URLRequest) throws -> URLRequest)? = nil
    ) -> RequestConvertible {
        RequestConvertible(
            url: url,
            method: method,
            headers: headers,
            timeout: configuration.timeoutInterval,
            requestModifier: requestModifier,
            encode: encode
        )
    }

    /// An upload whose body `makeUploadable` makes before the first attempt; with
    /// `makesUploadableSlowly`, off the caller's thread.
    func upload(
        with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)?,
        fileManager: FileManager,
        shouldAutomaticallyResume: Bool? = nil,
        makesUploadableSlowly: Bool = false,
        makeUploadable: @escaping @Sendable () throws -> UploadRequest.MadeBody
    ) -> UploadRequest {
        register(
            UploadRequest(
                convertible: convertible,
                makesUploadableSlowly: makesUploadableSlowly,
                makeUploadable: makeUploadable,
                fileManager: fileManager,
                maximumBodySize: configuration.maximumResponseBodySize,
                serializationQueue: serializationQueue,
                eventMonitor: requestEventMonitor,
                interceptor: interceptor,
                session: self
            ),
            automaticallyResuming: shouldAutomaticallyResume
        )
    }
}

extension Session {
    // MARK: - Multipart uploads

    /// Uploads `multipartFormData` to `url` (with `POST` by default), with its `Content-Type`
    /// unless `headers` set one.
    ///
    /// Before the first attempt, off the caller's thread, the form is encoded: in memory when
    /// smaller than `encodingMemoryThreshold` bytes, else to a temporary file that is streamed
    /// and removed when the request finishes. A part that cannot be read (a missing file, say)
    /// fails the request with ``CourierError/Kind/multipartEncodingFailed`` before anything is sent.
    ///
    /// - Parameters:
    ///   - multipartFormData: The form.
    ///   - url: Where to send it.
    ///   - encodingMemoryThreshold: The size from which the form goes through a file (10 MB by default).
    ///   - method: The method; `POST` by default.
    ///   - headers: Headers for this request; they win over the session's.
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - fileManager: Removes the temporary file the request made (an encoded form) when it finishes.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    ///   - requestModifier: A last chance to change the URLRequest.
    public func upload(
        multipartFormData: MultipartFormData,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        var headers = headers ?? HTTPHeaders()
        if headers["Content-Type"] == nil { headers.add(name: "Content-Type", value: multipartFormData.contentType) }
        return
            upload(
                with: convertible(url, method: method, headers: headers, requestModifier: requestModifier),
                interceptor: interceptor,
                fileManager: fileManager,
                shouldAutomaticallyResume: shouldAutomaticallyResume,
                makesUploadableSlowly: true
            ) {
                try Self.encode(multipartFormData, usingThreshold: encodingMemoryThreshold)
            }
    }

    /// Uploads the form `build` fills in, as the overload taking a ``MultipartFormData`` does.
    public func upload(
        multipartFormData build: (MultipartFormData) -> Void,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: (@Sendable (inout URLRequest) throws -> Void)? = nil
    ) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        build(form)
        return
            upload(
                multipartFormData: form,
                to: url,
                usingThreshold: encodingMemoryThreshold,
                method: method,
                headers: headers,
                interceptor: interceptor,
                fileManager: fileManager,
                shouldAutomaticallyResume: shouldAutomaticallyResume,
                requestModifier: requestModifier
            )
    }

    /// Uploads `multipartFormData` with the URLRequest `request` builds (its method, URL and
    /// headers; its own `httpBody` is ignored), as Alamofire's `upload(multipartFormData:with:)`.
    /// The form's `Content-Type` is added unless `request` sets one.
    ///
    /// - Parameters:
    ///   - multipartFormData: The form.
    ///   - request: Builds the request, for every attempt.
    ///   - encodingMemoryThreshold: The size from which the form goes through a file (10 MB by default).
    ///   - interceptor: Adapts and retries this request, before the session's interceptor.
    ///   - fileManager: Removes the temporary file the request made (an encoded form) when it finishes.
    ///   - shouldAutomaticallyResume: Whether adding the first response handler starts the request;
    ///     `nil` (the default) follows the session's `startRequestsImmediately`.
    public func upload(
        multipartFormData: MultipartFormData,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        upload(
            with: LabelledConvertible(base: request, contentType: multipartFormData.contentType),
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            makesUploadableSlowly: true
        ) {
            try Self.encode(multipartFormData, usingThreshold: encodingMemoryThreshold)
        }
    }

    /// Uploads the form `build` fills in with the URLRequest `request` builds, as the overload
    /// taking a ``MultipartFormData`` does.
    public func upload(
        multipartFormData build: (MultipartFormData) -> Void,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        shouldAutomaticallyResume: Bool? = nil
    ) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        build(form)
        return upload(
            multipartFormData: form,
            with: request,
            usingThreshold: encodingMemoryThreshold,
            interceptor: interceptor,
            fileManager: fileManager,
            shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// The folder, in the temporary directory, of encoded forms: one per user, private to them
    /// (see ``PrivateFolder``), since a form may hold anything the user sends.
    static let multipartFolderName = "CourierMultipart-\(geteuid())"

    /// The form's bytes in memory, or in a new temporary file when it is at least `threshold` bytes.
    static func encode(_ form: MultipartFormData, usingThreshold threshold: UInt64) throws -> UploadRequest.MadeBody {
        guard form.contentLength >= threshold else {
            return UploadRequest.MadeBody(body: .data(try form.encode()), temporaryFile: nil)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            multipartFolderName,
            isDirectory: true
        )
        do {
            try PrivateFolder.prepare(folder)
        } catch {
            throw CourierError.multipartEncodingFailed(error)
        }
        let file = folder.appendingPathComponent("\(UUID().uuidString).multipart")
        try form.writeEncodedData(to: file)
        do {
            return UploadRequest.MadeBody(body: try .file(file), temporaryFile: file)
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }
}

/// A caller's convertible whose request gets a `Content-Type` when it has none: a multipart
/// upload's boundary must reach the server with its body.
private struct LabelledConvertible: URLRequestConvertible {
    let base: any URLRequestConvertible
    let contentType: String

    func asURLRequest() throws -> URLRequest {
        var request = try base.asURLRequest()
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
