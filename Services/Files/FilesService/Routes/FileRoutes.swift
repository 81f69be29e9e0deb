import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import Permissions
import ServiceRuntime

/// The file API (contract §4) on files-service's router. Backendless puts its commands
/// (`binary/`, `copy`, …) in the same path space as the app's own files, told apart by method,
/// so each method has one `files/**` route and its handler reads the first name: a route per
/// command would make a file named like one unreachable by the others' methods (the router
/// matches paths before methods).
struct FileRoutes: Sendable {
    let catalog: FileCatalog
    let storage: any FileStorage
    let urls: FileURLs
    let limits: FileLimits
    let sources: URLSource
    let renditions: Renditions
    /// The objects whose file fields some paths belong to.
    let objects: ObjectFiles
    var access: FileAccess { FileAccess(catalog: catalog, objects: objects) }

    /// The root (`files`) is listed only: no upload names no file, and the root is never deleted,
    /// so those methods have no route there (the router's 404).
    func add(to routes: inout PublicRoutes) {
        let streamed = RouteOptions.streamed(limit: limits.upload, idleTimeout: limits.idleTimeout)
        for path in ["files", "files/**"] {
            let root = path == "files"
            routes.stream(.get, path, options: streamed, doc: root ? .listFileRoot : .readFile) { request, context in
                try await get(FileRequest(request, context: context), request, context)
            }
        }
        routes.stream(.post, "files/**", options: streamed, doc: .uploadFile) { request, context in
            try await post(FileRequest(request, context: context), request)
        }
        routes.stream(.delete, "files/**", options: streamed, doc: .deleteFile) { request, context in
            try await delete(FileRequest(request, context: context))
        }
        routes.stream(.put, "files/**", options: streamed, doc: .fileCommand) { request, context in
            try await put(FileRequest(request, context: context), request)
        }
    }

    /// `?action=exists`, `?action=count`, a directory's listing, or a file's bytes.
    private func get(_ target: FileRequest, _ request: Request, _ context: PublicRequestContext) async throws
        -> Response
    {
        let entry = target.path.isRoot ? nil : try await catalog.entry(app: target.app, path: target.path)
        try await access.require(.read, target, path: target.path, entry: entry, directory: target.namesDirectory)
        switch target.query["action"] {
        case "exists":
            return try .json(target.path.isRoot || entry != nil)
        case "count":
            try requireDirectory(target, entry)
            return try .json(try await count(target))
        case nil:
            try requireDirectory(target, entry, allowingFile: true)
            if var entry, !entry.isDirectory {
                if let size = try ImageSize.parse(target.query, maxSide: renditions.limits.maxSide) {
                    entry = try await renditions.entry(entry, app: target.app, size: size)
                }
                return Download(entry: entry, storage: storage, app: target.app).response(
                    to: request, eventLoop: context.eventLoop)
            }
            return try await listing(target)
        case .some(let action):
            throw ErrorEnvelope.badRequest("Unknown action '\(action)': use exists or count")
        }
    }

    /// 6000 unless the target is the root or an existing directory (or, when allowed, a file).
    private func requireDirectory(_ target: FileRequest, _ entry: FileEntry?, allowingFile: Bool = false) throws {
        guard !target.path.isRoot else { return }
        guard let entry, entry.isDirectory || allowingFile else { throw FileError.notFound(target.path.description) }
    }

    private func filter(_ target: FileRequest) throws -> ListingFilter {
        ListingFilter(
            pattern: target.query["pattern"].flatMap { $0.isEmpty || $0 == "*" ? nil : $0 },
            recursive: try target.flag("sub"), countDirectories: try target.flag("countDirectories"))
    }

    /// One page of a directory: `[{name, createdOn, publicUrl, url, size}]`.
    private func listing(_ target: FileRequest) async throws -> Response {
        let limit = try target.integer("pagesize", default: limits.pageSize, in: 1...limits.pageSize)
        let offset = try target.integer("offset", default: 0, in: 0...Int(Int32.max))
        let entries = try await readable(target, limit: limit, offset: offset)
        return try .json(
            entries.map { entry in
                ListingEntry(
                    name: entry.path.name, createdOn: entry.created,
                    publicUrl: urls.url(of: entry.path, prefix: target.publicPrefix),
                    url: entry.path.description, size: entry.size)
            })
    }

    /// A multipart upload, or a directory (a path ending with `/`).
    private func post(_ target: FileRequest, _ request: Request) async throws -> Response {
        let contentType = request.headers[.contentType] ?? ""
        if let boundary = try MultipartScanner.boundary(contentType: contentType) {
            if target.path.names.first == "append", target.path.names.count > 1 {
                return try await appendUpload(target, request, boundary: boundary)
            }
            let path = try target.filePath()
            let overwrite = try target.flag("overwrite")
            try await requireWritable(target, path, overwrite: overwrite)
            try await store(target, path: path, overwrite: overwrite) { key in
                try await readingFilePart(of: request, boundary: boundary) { bytes in
                    try await storage.write(bytes, app: target.app, key: key)
                }
            }
            return try .json(["fileURL": urls.url(of: path, prefix: target.publicPrefix)])
        }
        if contentType.lowercased().hasPrefix("application/json") {
            let body: URLUploadBody = try await JSONCommandBody.read(request)
            if let url = body.url { return try await uploadFromURL(target, url) }
        }
        guard target.namesDirectory, !target.path.isRoot else {
            throw FileError.invalidBody(
                "Upload a file as multipart/form-data with the field 'file', or end the path with '/' to create a directory"
            )
        }
        try await access.require(.write, target, path: target.path, directory: true)
        try await catalog.createDirectory(app: target.app, path: target.path, owner: target.identity.userId)
        return try .json(["fileURL": urls.url(of: target.path, prefix: target.publicPrefix)])
    }

    /// `POST files/{path}` or `files/append/{path}` with `{"url": …}`: the source's bytes,
    /// streamed from the web into storage.
    private func uploadFromURL(_ target: FileRequest, _ url: String) async throws -> Response {
        guard !url.isEmpty else { throw FileError.missingParameter("url") }
        let fetch: (String) async throws -> Int64 = { key in
            try await sources.fetch(url, limit: limits.upload) {
                try await storage.write($0, app: target.app, key: key)
            }
        }
        if target.path.names.first == "append", target.path.names.count > 1 {
            let path = try target.commandPath(dropping: 1)
            try await access.require(.write, target, path: path)
            try await append(target, path: path, write: fetch)
            return try .json(["fileURL": urls.url(of: path, prefix: target.publicPrefix)])
        }
        let path = try target.filePath()
        let overwrite = try target.flag("overwrite")
        try await requireWritable(target, path, overwrite: overwrite)
        try await store(target, path: path, overwrite: overwrite, write: fetch)
        return try .json(["fileURL": urls.url(of: path, prefix: target.publicPrefix)])
    }

    private func delete(_ target: FileRequest) async throws -> Response {
        try await access.requireEverywhere(.delete, target, path: target.path)
        try await catalog.remove(app: target.app, path: target.path)
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: "null")))
    }

    /// WRITE on `path`, then 6003 for an existing file without `overwrite` — both before any
    /// byte of the body is read.
    func requireWritable(_ target: FileRequest, _ path: FilePath, overwrite: Bool) async throws {
        let entry = try await catalog.entry(app: target.app, path: path)
        try await access.require(.write, target, path: path, entry: entry)
        if !overwrite, entry != nil { throw FileError.alreadyExists(path.description) }
    }

    /// One page of the directory's entries the caller may read. Without cells on or under the
    /// directory, nor files of objects in it, every entry is readable and PostgreSQL pages;
    /// otherwise entries are judged in batches until the page is full.
    private func readable(_ target: FileRequest, limit: Int, offset: Int) async throws -> [FileEntry] {
        let filter = try filter(target)
        let rules = try await catalog.rules(app: target.app, near: target.path, below: true)
        let holdsObjectFiles = try await objects.mayHold(target.path, app: target.app)
        if rules.isEmpty && !holdsObjectFiles {
            return try await catalog.list(
                app: target.app, directory: target.path, filter: filter, limit: limit, offset: offset)
        }
        var page: [FileEntry] = []
        var skipped = 0
        try await forEachReadable(target, filter: filter, rules: rules) { entry in
            if skipped < offset {
                skipped += 1
            } else {
                page.append(entry)
            }
            return page.count < limit
        }
        return page
    }

    /// How many entries of the directory the caller may read.
    private func count(_ target: FileRequest) async throws -> Int {
        let filter = try filter(target)
        let rules = try await catalog.rules(app: target.app, near: target.path, below: true)
        let holdsObjectFiles = try await objects.mayHold(target.path, app: target.app)
        if rules.isEmpty && !holdsObjectFiles {
            return try await catalog.count(app: target.app, directory: target.path, filter: filter)
        }
        var count = 0
        try await forEachReadable(target, filter: filter, rules: rules) { _ in
            count += 1
            return true
        }
        return count
    }

    /// Calls `body` with each entry of the listing the caller may read, in path order, until
    /// it answers false.
    private func forEachReadable(
        _ target: FileRequest, filter: ListingFilter, rules: FileRules, _ body: (FileEntry) -> Bool
    ) async throws {
        try await access.forEachJudged(.read, target, directory: target.path, filter: filter, rules: rules) {
            entry, allowed in
            !allowed || body(entry)
        }
    }

    /// Hands the `file` field of a multipart body to `write` as it streams, then reads the rest
    /// of the body (a file only counts once its part has closed and the body is well formed).
    func readingFilePart(
        of request: Request, boundary: String,
        _ write: (MultipartFileReader<LimitedBody<RequestBody>.AsyncIterator>.FileBytes) async throws -> Int64
    ) async throws -> Int64 {
        let reader = try MultipartFileReader(
            upstream: request.limitedBody(limit: limits.upload).makeAsyncIterator(), boundary: boundary)
        _ = try await reader.open()
        let size = try await write(MultipartFileReader.FileBytes(reader: reader))
        try await reader.finish()
        return size
    }

    /// Writes new bytes under a fresh key with `write`, then records them at `path` (a new file
    /// and new directories owned by `owner`, else by the caller); the new object is removed
    /// again if either step fails.
    func store(
        _ target: FileRequest, path: FilePath, overwrite: Bool, owner: String? = nil,
        write: (String) async throws -> Int64
    ) async throws {
        let key = StorageKey.make()
        do {
            let size = try await write(key)
            let file = StoredFile(key: key, size: size, contentType: MediaTypes.type(ofName: path.name))
            try await catalog.putFile(
                app: target.app, path: path, file: file, owner: owner ?? target.identity.userId, overwrite: overwrite)
        } catch {
            try? await storage.delete(app: target.app, key: key)
            throw error
        }
    }
}

/// One entry of a listing, as the SDKs decode it.
struct ListingEntry: Encodable {
    let name: String
    let createdOn: Int64
    let publicUrl: String
    let url: String
    let size: Int64
}

/// The limits files-service applies.
struct FileLimits: Sendable {
    /// The largest upload, in bytes.
    var upload: Int
    /// The largest base64 body of `files/binary/…` (contract: 6016 beyond 2,800,000).
    var base64Payload = 2_800_000
    /// How long a transfer may stay silent.
    var idleTimeout: Duration
    /// The largest listing page (and its default).
    var pageSize = 100
}
