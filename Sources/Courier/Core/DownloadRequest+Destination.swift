import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension DownloadRequest {
    /// How a finished download is moved into place.
    public struct Options: OptionSet, Sendable {
        /// Creates the destination's missing parent directories.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Replaces a file already at the destination (atomically: the old file stays whole until
        /// the new one takes its name). Without it, an existing file fails the request.
        public static let removePreviousFile = Options(rawValue: 1 << 1)

        /// The options' bits.
        public let rawValue: Int

        /// Options from their raw bits.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }
    }

    /// Where a finished download goes: given the temporary file and the response, returns the
    /// destination and how to move there. Called once, after the body is complete and validation
    /// passed, so a failed, cancelled or truncated download never appears at the destination.
    public typealias Destination =
        @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) -> (destinationURL: URL, options: Options)

    /// A destination in `directory`, named after the response: the file name its
    /// `Content-Disposition` suggests (reduced to a plain name, so it cannot climb out of
    /// `directory`), else the URL's last path component, else `download`.
    public static func suggestedDownloadDestination(
        in directory: URL,
        options: Options = []
    ) -> Destination {
        { _, response in
            (directory.appendingPathComponent(suggestedFileName(for: response)), options)
        }
    }

    /// A destination in a user directory (the documents folder by default), named as
    /// ``suggestedDownloadDestination(in:options:)`` names it.
    public static func suggestedDownloadDestination(
        for directory: FileManager.SearchPathDirectory = .documentDirectory,
        in domain: FileManager.SearchPathDomainMask = .userDomainMask,
        options: Options = []
    ) -> Destination {
        { temporaryURL, response in
            guard let folder = FileManager.default.urls(for: directory, in: domain).first else {
                return (temporaryURL, options)
            }
            return (folder.appendingPathComponent(suggestedFileName(for: response)), options)
        }
    }

    /// The file name a response suggests, safe to append to a directory.
    static func suggestedFileName(for response: HTTPURLResponse) -> String {
        let disposition = response.value(forHTTPHeaderField: "Content-Disposition").flatMap(ContentDisposition.fileName)
        for candidate in [disposition, response.url?.lastPathComponent] {
            if let name = candidate.flatMap(sanitizedFileName) { return name }
        }
        return "download"
    }

    /// `name` as one plain file name, safe to append to a directory; `nil` if nothing usable is
    /// left. See ``ContentDisposition/sanitizedFileName(_:)``.
    static func sanitizedFileName(_ name: String) -> String? {
        ContentDisposition.sanitizedFileName(name)
    }

    /// Moves the finished file at `source` to `destination` so that the destination either does
    /// not change or holds the whole file: a rename, or across file systems a copy beside the
    /// destination renamed into place.
    static func moveFile(from source: URL, to destination: URL, options: Options) throws {
        let manager = FileManager.default
        if options.contains(.createIntermediateDirectories) {
            try manager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        if !options.contains(.removePreviousFile), manager.fileExists(atPath: destination.path) {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path])
        }
        if rename(source.path, destination.path) == 0 { return }
        let renameError = errno
        guard renameError == EXDEV else {
            throw POSIXError(POSIXErrorCode(rawValue: renameError) ?? .EIO)
        }
        let staging = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).partial")
        do {
            try manager.copyItem(at: source, to: staging)
            guard rename(staging.path, destination.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            try? manager.removeItem(at: source)
        } catch {
            try? manager.removeItem(at: staging)
            throw error
        }
    }
}
