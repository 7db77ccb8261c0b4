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
    /// Set when the folder or file was refused (a link, someone else's): the path may lead
    /// anywhere, so ``remove()`` leaves it alone.
    private var wasRefused = false

    /// The file at `url`, holding `existingLength` bytes of the body already (a resumed download),
    /// worked on `queue` (a download passes its request's serialization queue, so that its writes,
    /// its validation, the move into place and its response handlers' serializers all run on one queue).
    init(url: URL, existingLength: Int64 = 0, queue: DispatchQueue = DispatchQueue(label: "Courier.DownloadFile")) {
        self.url = url
        self.queue = queue
        self.length = existingLength
    }

    /// The folder, in the temporary directory, of the files downloads write: one per user
    /// (`CourierDownloads-<uid>`), so that on a shared host no one else can read a download in
    /// flight or prepare the folder beforehand.
    static let folderName = "CourierDownloads-\(geteuid())"

    /// A new file in Courier's download folder of `root` (the temporary directory by default).
    static func makeTemporary(
        in root: URL = FileManager.default.temporaryDirectory,
        queue: DispatchQueue = DispatchQueue(label: "Courier.DownloadFile")
    ) -> DownloadFile {
        let folder = root.appendingPathComponent(folderName, isDirectory: true)
        return DownloadFile(url: folder.appendingPathComponent("\(UUID().uuidString).download"), queue: queue)
    }

    /// Opens the file for writing at `offset`, dropping anything after it: `0` starts over, the
    /// resumed length continues. Creates the file (and its folder) if needed, both private to
    /// the user (see ``PrivateFolder``).
    func open(keepingBytes offset: Int64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isRetired else { return }
        do {
            if handle == nil {
                try PrivateFolder.prepare(url.deletingLastPathComponent())
                handle = try PrivateFolder.openFile(url)
            }
            let existing = try handle?.seekToEnd() ?? 0
            let kept = min(max(offset, 0), Int64(existing))
            try handle?.truncate(atOffset: UInt64(kept))
            try handle?.seek(toOffset: UInt64(kept))
            length = kept
            writeError = nil
        } catch {
            if error is PrivateFolder.Refusal { wasRefused = true }
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

    /// Closes and deletes the file, unless its folder or itself was refused.
    func remove() {
        close()
        if !wasRefused { try? FileManager.default.removeItem(at: url) }
        length = 0
    }
}

/// The folders downloads and encoded multipart forms are written in, and the files in them: only the user may enter the folder
/// (mode 0700) or read a file (0600), so that on a shared host another user can neither read a
/// download in flight nor plant the folder, or a link in its place, beforehand.
enum PrivateFolder {
    /// Why a folder or file was refused.
    struct Refusal: LocalizedError, CustomStringConvertible {
        let description: String
        var errorDescription: String? { description }
    }

    /// Makes `folder` (mode 0700) if it does not exist; accepts an existing one only if it is a
    /// real directory (not a symbolic link) owned by the user, removing any group or other
    /// permission it has.
    ///
    /// - Throws: ``Refusal`` for a folder that is a link, not a directory, or someone else's;
    ///   the system's error when it cannot be made.
    static func prepare(_ folder: URL) throws {
        let path = folder.path
        if mkdir(path, 0o700) != 0 {
            let code = errno
            switch code {
            case EEXIST:
                break
            case ENOENT:
                // The temporary directory itself is missing: make it, then the folder.
                try FileManager.default.createDirectory(
                    at: folder.deletingLastPathComponent(),
                    withIntermediateDirectories: true
                )
                guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw posixError(errno, path) }
            default:
                throw posixError(code, path)
            }
        }
        // lstat: a link is judged as itself, never by what it points at.
        var status = stat()
        guard lstat(path, &status) == 0 else { throw posixError(errno, path) }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK:
            throw Refusal(
                description: "The folder \(path) is a symbolic link; Courier writes only into a real folder."
            )
        default: throw Refusal(description: "The folder \(path) exists but is not a folder.")
        }
        guard status.st_uid == geteuid() else {
            throw Refusal(
                description: "The folder \(path) belongs to another user (uid \(status.st_uid)); remove it."
            )
        }
        // Ours (so no one else can swap it: the temporary directory is sticky), but open to
        // others: close it. Files already in it are checked one by one when opened.
        if status.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw posixError(errno, path)
        }
    }

    /// Opens `file` for writing, creating it with mode 0600 if it does not exist; an existing
    /// one (a resumed download) must be a regular file of the user's, and loses any group or
    /// other permission before a byte is written.
    static func openFile(_ file: URL) throws -> FileHandle {
        let path = file.path
        // O_NONBLOCK: a FIFO planted at the path must fail the checks below, not block the open.
        var descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        if descriptor < 0, errno == EEXIST {
            descriptor = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        }
        guard descriptor >= 0 else { throw posixError(errno, path) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            _ = close(descriptor)
            throw posixError(code, path)
        }
        let problem: String?
        if status.st_mode & S_IFMT != S_IFREG {
            problem = "The file \(path) is not a regular file."
        } else if status.st_uid != geteuid() {
            problem = "The file \(path) belongs to another user (uid \(status.st_uid))."
        } else if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) != 0 {
            problem = "The file \(path) is readable by others and cannot be made private."
        } else {
            problem = nil
        }
        if let problem {
            _ = close(descriptor)
            throw Refusal(description: problem)
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    private static func posixError(_ code: Int32, _ path: String) -> any Error {
        CocoaError(
            .fileWriteUnknown,
            userInfo: [
                NSFilePathErrorKey: path,
                NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO),
                NSLocalizedDescriptionKey: "\(path): \(String(cString: strerror(code)))",
            ]
        )
    }
}
