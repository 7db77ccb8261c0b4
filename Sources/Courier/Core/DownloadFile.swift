import Foundation

// @unchecked Sendable: every mutable member is touched only on `queue`, whose blocks run one at a time.
/// The temporary file a download writes into, off the transport's threads.
///
/// Every method must be called on ``queue``; the request enqueues writes there in the order the
/// body arrives, and enqueues its completion behind them, so it sees every byte written.
final class DownloadFile: @unchecked Sendable {
    /// Where the file is.
    let url: URL
    /// The serial queue all file work runs on.
    let queue: DispatchQueue
    private var handle: FileHandle?
    /// Bytes in the file.
    private(set) var length: Int64 = 0
    /// The first write failure; later writes are skipped, and the attempt fails with it.
    private(set) var writeError: (any Error)?
    /// Set once the request has finished with the file: it is never opened again.
    private var isRetired = false

    /// The file at `url`, holding `existingLength` bytes of the body already (a resumed download).
    init(url: URL, existingLength: Int64 = 0) {
        self.url = url
        self.queue = DispatchQueue(label: "Courier.DownloadFile")
        self.length = existingLength
    }

    /// The folder, in the temporary directory, of the files downloads write.
    static let folderName = "CourierDownloads"

    /// A new file in Courier's download folder of the temporary directory.
    static func makeTemporary() -> DownloadFile {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(folderName, isDirectory: true)
        return DownloadFile(url: folder.appendingPathComponent("\(UUID().uuidString).download"))
    }

    /// Opens the file for writing at `offset`, dropping anything after it: `0` starts over, the
    /// resumed length continues. Creates the file (and its folder) if needed.
    func open(keepingBytes offset: Int64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isRetired else { return }
        do {
            if handle == nil {
                let manager = FileManager.default
                try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                if !manager.fileExists(atPath: url.path) {
                    guard manager.createFile(atPath: url.path, contents: nil) else {
                        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                    }
                }
                handle = try FileHandle(forWritingTo: url)
            }
            let existing = try handle?.seekToEnd() ?? 0
            let kept = min(max(offset, 0), Int64(existing))
            try handle?.truncate(atOffset: UInt64(kept))
            try handle?.seek(toOffset: UInt64(kept))
            length = kept
            writeError = nil
        } catch {
            writeError = error
        }
    }

    /// Appends `data`, unless a write has failed or the file is closed.
    func write(_ data: Data) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard writeError == nil, let handle else { return }
        do {
            try handle.write(contentsOf: data)
            length += Int64(data.count)
        } catch {
            writeError = error
        }
    }

    /// Flushes and closes the file; it stays on disk.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        try? handle?.close()
        handle = nil
    }

    /// Closes the file for good: a late response head cannot reopen (and truncate) it.
    func retire() {
        close()
        isRetired = true
    }

    /// Closes and deletes the file.
    func remove() {
        close()
        try? FileManager.default.removeItem(at: url)
        length = 0
    }
}
