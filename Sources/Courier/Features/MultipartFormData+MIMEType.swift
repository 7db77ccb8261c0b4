extension MultipartFormData {
    /// The MIME type for a file name extension (compared case-insensitively), or
    /// `application/octet-stream` for one not in the table.
    ///
    /// A built-in table of common types, because Linux has no `UTType` and the answer must be the same on
    /// every platform.
    static func mimeType(forPathExtension pathExtension: String) -> String {
        mimeTypes[pathExtension.lowercased()] ?? "application/octet-stream"
    }

    private static let mimeTypes: [String: String] = [
        // Text and documents.
        "txt": "text/plain",
        "text": "text/plain",
        "log": "text/plain",
        "md": "text/markdown",
        "html": "text/html",
        "htm": "text/html",
        "css": "text/css",
        "csv": "text/csv",
        "tsv": "text/tab-separated-values",
        "ics": "text/calendar",
        "js": "text/javascript",
        "mjs": "text/javascript",
        "json": "application/json",
        "jsonld": "application/ld+json",
        "xml": "application/xml",
        "yaml": "application/yaml",
        "yml": "application/yaml",
        "pdf": "application/pdf",
        "rtf": "application/rtf",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "epub": "application/epub+zip",
        "wasm": "application/wasm",
        // Archives.
        "zip": "application/zip",
        "gz": "application/gzip",
        "tgz": "application/gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "xz": "application/x-xz",
        "7z": "application/x-7z-compressed",
        "zst": "application/zstd",
        // Images.
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "svg": "image/svg+xml",
        "heic": "image/heic",
        "heif": "image/heif",
        "avif": "image/avif",
        "bmp": "image/bmp",
        "tif": "image/tiff",
        "tiff": "image/tiff",
        "ico": "image/vnd.microsoft.icon",
        // Audio.
        "mp3": "audio/mpeg",
        "m4a": "audio/mp4",
        "aac": "audio/aac",
        "wav": "audio/wav",
        "flac": "audio/flac",
        "ogg": "audio/ogg",
        "oga": "audio/ogg",
        "opus": "audio/opus",
        // Video.
        "mp4": "video/mp4",
        "m4v": "video/mp4",
        "mov": "video/quicktime",
        "webm": "video/webm",
        "mkv": "video/x-matroska",
        "avi": "video/x-msvideo",
        "mpeg": "video/mpeg",
        "mpg": "video/mpeg",
        "ogv": "video/ogg",
        // Fonts.
        "woff": "font/woff",
        "woff2": "font/woff2",
        "ttf": "font/ttf",
        "otf": "font/otf",
    ]
}
