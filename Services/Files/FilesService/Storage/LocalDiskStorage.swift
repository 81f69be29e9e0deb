import NIOCore
import _NIOFileSystem

/// Objects as files under a root directory, a folder per app: `ROOT/APP/ab/abcd…` (the key's
/// first two digits spread objects over 256 folders). A file is written unnamed (Linux's
/// `O_TMPFILE`, or a temporary name where the file system lacks it), flushed to disk, and only
/// then linked under its name, so an aborted or failed write leaves nothing.
package struct LocalDiskStorage: FileStorage {
    /// The directory holding every app's folder.
    package let root: String
    private let fileSystem: FileSystem
    /// How much a read hands over at once.
    static let chunkLength = ByteCount.kibibytes(256)

    /// Storage under `root`, which is created if missing.
    package init(root: String, fileSystem: FileSystem = .shared) {
        self.root = root
        self.fileSystem = fileSystem
    }

    func folder(app: String, key: String) -> _NIOFileSystem.FilePath {
        _NIOFileSystem.FilePath(root).appending(app).appending(String(key.prefix(2)))
    }

    func location(app: String, key: String) -> _NIOFileSystem.FilePath {
        folder(app: app, key: key).appending(key)
    }

    package func write<Body: AsyncSequence>(_ body: Body, app: String, key: String) async throws -> Int64
    where Body.Element == ByteBuffer {
        try await create(app: app, key: key) { writer in
            // Iterated here rather than by the writer, which would wrap the body's own error.
            var count: Int64 = 0
            for try await chunk in body { count += try await writer.write(contentsOf: chunk) }
            return count
        }
    }

    package func compose(app: String, sources: [String], key: String) async throws -> Int64 {
        try await create(app: app, key: key) { writer in
            var count: Int64 = 0
            for source in sources {
                try await fileSystem.withFileHandle(forReadingAt: location(app: app, key: source)) { handle in
                    for try await chunk in handle.readChunks(chunkLength: Self.chunkLength) {
                        count += try await writer.write(contentsOf: chunk)
                    }
                }
            }
            return count
        }
    }

    /// Creates object `key` unnamed, lets `fill` write it, flushes it and links it into place;
    /// nothing stays when `fill` throws.
    private func create(
        app: String, key: String, fill: (inout BufferedWriter<WriteFileHandle>) async throws -> Int64
    ) async throws -> Int64 {
        let folder = folder(app: app, key: key)
        try await fileSystem.createDirectory(at: folder, withIntermediateDirectories: true)
        let written = try await fileSystem.withFileHandle(
            forWritingAt: folder.appending(key), options: .newFile(replaceExisting: false)
        ) { handle in
            let count = try await handle.withBufferedWriter(capacity: .kibibytes(512)) { writer in
                try await fill(&writer)
            }
            try await handle.synchronize()
            return count
        }
        // The new name is durable only once its directory is.
        try await fileSystem.withDirectoryHandle(atPath: folder) { try await $0.synchronize() }
        return written
    }

    package func read(
        app: String, key: String, range: Range<Int64>, into consume: (ByteBuffer) async throws -> Void
    ) async throws {
        guard !range.isEmpty else { return }
        try await fileSystem.withFileHandle(forReadingAt: location(app: app, key: key)) { handle in
            for try await chunk in handle.readChunks(in: range, chunkLength: Self.chunkLength) {
                try await consume(chunk)
            }
        }
    }

    package func localLocation(app: String, key: String) -> String? {
        "\(app)/\(key.prefix(2))/\(key)"
    }

    package func delete(app: String, key: String) async throws {
        try await fileSystem.removeItem(at: location(app: app, key: key), strategy: .platformDefault)
    }
}
