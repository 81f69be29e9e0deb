import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// The commands that share the file tree's path space: `PUT files/copy|move|rename` (JSON
/// bodies), the three append forms, and `PUT files/binary/…`.
extension FileRoutes {
    /// `PUT files/{command}/…`, by the first name.
    func put(_ target: FileRequest, _ request: Request) async throws -> Response {
        let names = target.path.names
        switch (names.first, names.count) {
        case ("copy", 1): return try await copy(target, try await RelocationBody.read(request))
        case ("move", 1): return try await move(target, try await RelocationBody.read(request))
        case ("rename", 1): return try await rename(target, try await RenameBody.read(request))
        case ("permissions", 2...):
            let path = try FilePath(decoded: names.dropFirst(2).joined(separator: "/"))
            try await access.change(target, request, decision: names[1], path: path)
            return try .json(Optional<String>.none)
        case ("binary", 2...):
            let path = try target.commandPath(dropping: 1)
            try await requireWritable(target, path, overwrite: try target.flag("overwrite"))
            let bytes = try await Base64Body.read(request, limit: limits.base64Payload)
            try await store(target, path: path, overwrite: try target.flag("overwrite")) {
                try await storage.write(SingleBuffer(buffer: bytes), app: target.app, key: $0)
            }
            return try .json(urls.url(of: path, prefix: target.publicPrefix))
        case ("append", 3...) where names[1] == "binary":
            let path = try target.commandPath(dropping: 2)
            try await access.require(.write, target, path: path)
            let bytes = try await Base64Body.read(request, limit: limits.base64Payload)
            try await append(target, path: path) {
                try await storage.write(SingleBuffer(buffer: bytes), app: target.app, key: $0)
            }
            return try .json(urls.url(of: path, prefix: target.publicPrefix))
        case ("append", 2...):
            let path = try target.commandPath(dropping: 1)
            try await access.require(.write, target, path: path)
            try await append(target, path: path) {
                try await storage.write(request.limitedBody(limit: limits.upload), app: target.app, key: $0)
            }
            return try .json(urls.url(of: path, prefix: target.publicPrefix))
        default:
            throw ErrorEnvelope.endpointNotFound(method: "PUT", path: "files/" + target.path.description)
        }
    }

    /// `POST files/append/{path}`: a multipart file appended.
    func appendUpload(_ target: FileRequest, _ request: Request, boundary: String) async throws -> Response {
        let path = try target.commandPath(dropping: 1)
        try await access.require(.write, target, path: path)
        try await append(target, path: path) { key in
            try await readingFilePart(of: request, boundary: boundary) { bytes in
                try await storage.write(bytes, app: target.app, key: key)
            }
        }
        return try .json(["fileURL": urls.url(of: path, prefix: target.publicPrefix)])
    }

    /// Stores the addition under a key of its own with `write`, then appends it to the file at
    /// `path` under the path's lock (for a new file the addition itself becomes the file).
    func append(_ target: FileRequest, path: FilePath, write: (String) async throws -> Int64) async throws {
        let (app, addition) = (target.app, StorageKey.make())
        var created: [String] = []
        do {
            let size = try await write(addition)
            created.append(addition)
            let contentType = MediaTypes.type(ofName: path.name)
            try await catalog.append(app: app, path: path, owner: target.identity.userId) { current in
                guard let current else { return StoredFile(key: addition, size: size, contentType: contentType) }
                let combined = StorageKey.make()
                created.append(combined)
                let total = try await storage.compose(app: app, sources: [current, addition], key: combined)
                return StoredFile(key: combined, size: total, contentType: contentType)
            }
            // The combined object (or the addition, for a new file) is the file now.
            created.removeLast()
        } catch {
            for key in created { try? await storage.delete(app: app, key: key) }
            throw error
        }
        for key in created { try? await storage.delete(app: app, key: key) }
    }

    /// `PUT files/copy {"sourcePath", "targetPath"}`: the file or directory copied into the
    /// target directory, bytes and all; answers the copy's URL.
    private func copy(_ target: FileRequest, _ body: RelocationBody) async throws -> Response {
        let (source, directory) = try body.paths()
        let destination = try directory.appending(source.name)
        try await access.requireEverywhere(.read, target, path: source)
        try await access.require(.write, target, path: destination)
        if try await catalog.entry(app: target.app, path: destination) != nil {
            throw FileError.targetExists(destination.description)
        }
        let entries = try await catalog.subtree(app: target.app, at: source)
        var created: [String] = []
        do {
            var copies: [FileEntry] = []
            for var entry in entries {
                entry.path = entry.path.rebased(from: source, onto: destination)
                if let key = entry.storageKey {
                    let copy = StorageKey.make()
                    _ = try await storage.compose(app: target.app, sources: [key], key: copy)
                    created.append(copy)
                    entry.storageKey = copy
                }
                copies.append(entry)
            }
            try await catalog.insert(copies: copies, app: target.app, owner: target.identity.userId)
        } catch {
            for key in created { try? await storage.delete(app: target.app, key: key) }
            throw error
        }
        return try .json(urls.url(of: destination, prefix: target.publicPrefix))
    }

    /// A move or rename takes DELETE where the entry was and WRITE where it goes.
    private func requireMovable(_ target: FileRequest, from source: FilePath, to destination: FilePath) async throws {
        let entry = try await access.requireEverywhere(.delete, target, path: source)
        try await access.require(.write, target, path: destination, directory: entry?.isDirectory ?? false)
    }

    /// `PUT files/move {"sourcePath", "targetPath"}`: moved into the target directory.
    private func move(_ target: FileRequest, _ body: RelocationBody) async throws -> Response {
        let (source, directory) = try body.paths()
        let destination = try directory.appending(source.name)
        try await requireMovable(target, from: source, to: destination)
        try await catalog.relocate(app: target.app, from: source, to: destination, owner: target.identity.userId)
        return try .json(urls.url(of: destination, prefix: target.publicPrefix))
    }

    /// `PUT files/rename {"oldPathName", "newName"}`: renamed in its directory.
    private func rename(_ target: FileRequest, _ body: RenameBody) async throws -> Response {
        guard let old = body.oldPathName, !old.isEmpty else { throw FileError.missingParameter("oldPathName") }
        guard let name = body.newName, !name.isEmpty else { throw FileError.missingParameter("newName") }
        let source = try FilePath(decoded: old)
        guard !source.isRoot else { throw FileError.missingParameter("oldPathName") }
        let destination = try source.parent.appending(name)
        try await requireMovable(target, from: source, to: destination)
        try await catalog.relocate(app: target.app, from: source, to: destination, owner: target.identity.userId)
        return try .json(urls.url(of: destination, prefix: target.publicPrefix))
    }
}

/// The body of copy and move.
struct RelocationBody: Decodable {
    let sourcePath: String?
    let targetPath: String?

    static func read(_ request: Request) async throws -> RelocationBody { try await JSONCommandBody.read(request) }

    /// The source (not the root) and the target directory; 6028 for a missing one.
    func paths() throws -> (source: FilePath, directory: FilePath) {
        guard let sourcePath, !sourcePath.isEmpty else { throw FileError.missingParameter("sourcePath") }
        guard let targetPath else { throw FileError.missingParameter("targetPath") }
        let source = try FilePath(decoded: sourcePath)
        guard !source.isRoot else { throw FileError.missingParameter("sourcePath") }
        return (source, try FilePath(decoded: targetPath))
    }
}

/// The body of an upload from a URL (a JSON body without `url` creates a directory).
struct URLUploadBody: Decodable {
    let url: String?
}

/// The body of rename.
struct RenameBody: Decodable {
    let oldPathName: String?
    let newName: String?

    static func read(_ request: Request) async throws -> RenameBody { try await JSONCommandBody.read(request) }
}

/// Small JSON command bodies.
enum JSONCommandBody {
    /// The largest command body.
    static let limit = 64 << 10

    static func read<Body: Decodable>(_ request: Request) async throws -> Body {
        var bytes = try await PublicRoutes.body(of: request, limit: limit)
        if bytes.readableBytes == 0 { bytes = ByteBuffer(string: "{}") }
        do {
            return try JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView))
        } catch {
            throw FileError.invalidBody("The body must be a JSON object with the command's fields")
        }
    }
}
