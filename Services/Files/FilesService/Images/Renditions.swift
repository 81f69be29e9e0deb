import InternalProtocol
import NIOCore
import NIOPosix
import _NIOFileSystem

/// Resized copies of images (Backbeam's "images optimised for the device"): made on the first
/// request for a size, stored beside the original under a key of their own, served like any
/// file afterwards, and discarded with the original's object when its bytes change or go.
struct Renditions: Sendable {
    let catalog: FileCatalog
    let storage: any FileStorage
    let resizer: ImageResizer
    /// Where the resizer blocks.
    let threads: NIOThreadPool
    /// Bounds how many resizes run and wait.
    let gate: ResizeGate
    let limits: ImageLimits
    /// Where originals and results are written while a resize runs.
    let scratch: String

    /// `entry` as it answers for `size`: the same file with its resized copy's bytes.
    func entry(_ entry: FileEntry, app: String, size: ImageSize) async throws -> FileEntry {
        guard let original = entry.storageKey else { throw ImageError.notAnImage }
        let format = size.format(forOriginal: entry.path.name)
        let name = size.rendition(format)
        var copy = try await catalog.rendition(of: original, name)
        if copy == nil {
            guard entry.size <= limits.maxBytes else { throw ImageError.tooLarge(limit: limits.maxBytes) }
            copy = try await gate.run {
                // Another request for the same size may have made it while this one waited.
                if let made = try await catalog.rendition(of: original, name) { return made }
                return try await make(entry, app: app, size: size, format: format, name: name)
            }
        }
        guard let copy else { throw ImageError.notAnImage }
        var resized = entry
        resized.storageKey = copy.key
        resized.size = copy.size
        resized.contentType = copy.contentType
        return resized
    }

    /// Resizes the original in a scratch folder of its own, removed afterwards whatever happens.
    private func make(_ entry: FileEntry, app: String, size: ImageSize, format: ImageFormat, name: String)
        async throws -> StoredFile
    {
        let folder = _NIOFileSystem.FilePath(scratch).appending("resize-" + StorageKey.make())
        try await FileSystem.shared.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            let copy = try await resize(entry, app: app, size: size, format: format, name: name, in: folder)
            _ = try? await FileSystem.shared.removeItem(at: folder, strategy: .platformDefault, recursively: true)
            return copy
        } catch {
            _ = try? await FileSystem.shared.removeItem(at: folder, strategy: .platformDefault, recursively: true)
            throw error
        }
    }

    private func resize(
        _ entry: FileEntry, app: String, size: ImageSize, format: ImageFormat, name: String,
        in folder: _NIOFileSystem.FilePath
    ) async throws -> StoredFile {
        let original = entry.storageKey ?? ""
        let source = folder.appending("original")
        let output = folder.appending("resized")
        // libvips reads files, and an S3 object is none: the original is streamed to one.
        try await FileSystem.shared.withFileHandle(forWritingAt: source, options: .newFile(replaceExisting: false)) {
            handle in
            try await handle.withBufferedWriter(capacity: .kibibytes(256)) { writer in
                try await storage.read(app: app, key: original, range: 0..<entry.size) { chunk in
                    _ = try await writer.write(contentsOf: chunk)
                }
            }
        }
        let (resizer, sourcePath, outputPath) = (resizer, source.string, output.string)
        try await threads.runIfActive {
            try resizer.resize(sourcePath, to: outputPath, size: size, format: format)
        }
        let key = StorageKey.make()
        let bytes = try await FileSystem.shared.withFileHandle(forReadingAt: output) { handle in
            try await storage.write(handle.readChunks(chunkLength: .kibibytes(256)), app: app, key: key)
        }
        let copy = StoredFile(key: key, size: bytes, contentType: format.contentType)
        do {
            if try await !catalog.addRendition(
                app: app, path: entry.path, original: original, name, copy: copy, limit: limits.renditionsPerImage)
            {
                // The original changed meanwhile, or has as many sizes kept as allowed: this
                // copy serves this one download, then goes.
                try await catalog.transaction { try await catalog.discard([key], app: app, on: $0) }
            }
        } catch {
            try? await storage.delete(app: app, key: key)
            throw error
        }
        return copy
    }
}

/// The bounds of image sizes.
struct ImageLimits: Sendable {
    /// The most pixels an original may have.
    var maxPixels = 64_000_000
    /// The largest original, in bytes.
    var maxBytes: Int64 = 64 << 20
    /// The longest side that may be asked for.
    var maxSide = 4096
    /// How many resizes run at once, and how many may wait.
    var concurrency = 2
    var queue = 16
    /// How many sizes of one image are kept; others are made for each request.
    var renditionsPerImage = 32
}
