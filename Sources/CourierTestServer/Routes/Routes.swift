import NIOHTTP1

/// Every route the test server answers, in matching order.
enum Routes {
    /// The methods httpbin's "any method" routes take.
    static let anyMethod: [HTTPMethod] = [.GET, .POST, .PUT, .DELETE, .PATCH, .TRACE]

    /// The largest body the generated-data routes (`/bytes`, `/stream-bytes`, `/range`, `/drip`)
    /// produce. httpbin stops at 100 KiB (10 MiB for `/drip`); this server goes further so tests and
    /// benchmarks can move large bodies, generating them lazily in constant memory.
    static let largestGeneratedBody = 1 << 36

    /// The largest chunk a generated body is written in: a client's `chunk_size` is capped here so
    /// no request can make the server allocate a huge buffer.
    static let largestChunk = 1024 * 1024

    /// A requested chunk size, kept within 1...``largestChunk``.
    static func chunkSize(_ requested: Int) -> Int {
        min(max(1, requested), largestChunk)
    }

    /// The router holding all route groups.
    static let router: Router = {
        var router = Router()
        router.add(InspectionRoutes.routes)
        router.add(StatusRoutes.routes)
        router.add(RedirectRoutes.routes)
        router.add(AuthRoutes.routes)
        router.add(ResponseFormatRoutes.routes)
        router.add(DynamicDataRoutes.routes)
        router.add(CachingRoutes.routes)
        router.add(CookieRoutes.routes)
        router.add(FaultRoutes.routes)
        router.add(UploadRoute.routes)
        router.add(MultipartUploadRoute.routes)
        router.add(RecordsRoute.routes)
        router.add(LineRoutes.routes)
        router.add(OCSPRoute.routes)
        return router
    }()
}
