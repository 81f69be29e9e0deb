import DataEngine
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import Permissions
import ServiceRuntime

/// QuickBlox's file fields (the `File` type of its custom objects) on `FILE_REF` columns, at
/// `data/{table}/{objectId}/file?field_name={column}`:
/// - `POST` with a multipart `file` stores it at `{table}/{objectId}/{column}/{file name}` in
///   the app's tree, points the column at it and removes the file it named before; answers the
///   updated object;
/// - `GET` answers the file's bytes as any download (ranges, validators, image sizes aside);
/// - `DELETE` empties the column and removes the file; answers the updated object.
/// The object's permissions (find, update) are the data engine's. The file belongs to the object
/// (``ObjectFiles``): its owner is the object's, and through any route the object's rights
/// decide who may read, replace or remove it, instead of the tree's cells.
struct FileFieldRoutes: Sendable {
    let files: FileRoutes
    let engine: DataEngine

    func add(to routes: inout PublicRoutes) {
        let streamed = RouteOptions.streamed(limit: files.limits.upload, idleTimeout: files.limits.idleTimeout)
        let path = "data/:table/:id/file"
        routes.stream(.post, path, options: streamed, doc: .uploadFileField) { request, context in
            try await upload(try FileField(request, context), request)
        }
        routes.stream(.get, path, options: streamed, doc: .downloadFileField) { request, context in
            try await download(try FileField(request, context), request, context)
        }
        routes.stream(.delete, path, options: streamed, doc: .deleteFileField) { request, context in
            try await delete(try FileField(request, context), context)
        }
    }

    private func upload(_ field: FileField, _ request: Request) async throws -> Response {
        guard let boundary = try MultipartScanner.boundary(contentType: request.headers[.contentType] ?? "") else {
            throw FileError.invalidBody("Upload the file as multipart/form-data with the field 'file'")
        }
        let (column, previous, owner) = try await current(field)
        try await requireUpdatable(field)
        let reader = try MultipartFileReader(
            upstream: request.limitedBody(limit: files.limits.upload).makeAsyncIterator(), boundary: boundary)
        let headers = try await reader.open()
        let name =
            HeaderParameters(headers["content-disposition"] ?? "")["filename"].flatMap { $0.isEmpty ? nil : $0 }
            ?? column
        let target = try field.target(column: column, name: name)
        try await files.requireWritable(target, target.path, overwrite: true)
        // The column moves first, so an update the caller may not make touches no file; if the
        // bytes then fail, it moves back.
        let object = try await point(field, column, at: target.path.description)
        do {
            try await files.store(target, path: target.path, overwrite: true, owner: owner) { key in
                let size = try await files.storage.write(
                    MultipartFileReader.FileBytes(reader: reader), app: target.app, key: key)
                try await reader.finish()
                return size
            }
        } catch {
            _ = try? await point(field, column, at: previous?.description)
            throw error
        }
        if let previous, previous != target.path { await removeQuietly(previous, field) }
        return Self.json(object)
    }

    private func download(_ field: FileField, _ request: Request, _ context: PublicRequestContext) async throws
        -> Response
    {
        guard let path = try await current(field).path else {
            throw FileError.notFound("\(field.table)/\(field.id)/\(field.column)")
        }
        let target = field.target(path: path)
        guard let entry = try await files.catalog.entry(app: target.app, path: path), !entry.isDirectory else {
            throw FileError.notFound(path.description)
        }
        try await files.access.require(.read, target, path: path, entry: entry)
        return Download(entry: entry, storage: files.storage, app: target.app).response(
            to: request, eventLoop: context.eventLoop)
    }

    private func delete(_ field: FileField, _ context: PublicRequestContext) async throws -> Response {
        let (column, previous, _) = try await current(field)
        let object = try await point(field, column, at: nil)
        if let previous { await removeQuietly(previous, field) }
        return Self.json(object)
    }

    /// The column as the schema names it, the file it names now and the object's owner
    /// (checking that it is a `FILE_REF` column and that the caller may read the object).
    private func current(_ field: FileField) async throws -> (column: String, path: FilePath?, owner: String?) {
        guard let column = try await engine.column(field.column, of: field.table, identity: field.identity),
            column.type == .fileReference
        else { throw FileError.notAFileField(field.column, table: field.table) }
        let text = try await engine.object(
            field.table, id: field.id, query: FindQuery(), identity: field.identity, logger: field.logger)
        let object = try? JSONParser.parse(text).object
        let value = object?[column.name]?.string
        return (column.name, value.flatMap { FilePath(fileReference: $0) }, object?["ownerId"]?.string)
    }

    /// 1023 (1000 for an object gone meanwhile) unless the caller may update the object: the
    /// update's own refusal, before any byte of the upload is read.
    private func requireUpdatable(_ field: FileField) async throws {
        let permits = try await engine.permits(
            .update, objectIDs: [field.id], table: field.table, identity: field.identity, logger: field.logger)
        guard permits.permitted.contains(field.id) else {
            guard permits.existing.contains(field.id) else { throw DataError.entityNotFound(field.id) }
            let table = try await engine.cache.catalog(for: field.identity.appId).table(named: field.table)?.name
            throw DataError.permissionDenied(DataOperation.update.rawValue, table: table ?? field.table)
        }
    }

    /// Sets the column to `path` (nil empties it); answers the updated object.
    private func point(_ field: FileField, _ column: String, at path: String?) async throws -> String {
        try await engine.update(
            field.table, id: field.id, changes: JSONObject([(column, path.map(JSONValue.string) ?? .null)]),
            identity: field.identity, logger: field.logger)
    }

    /// Removes a file the column no longer names, when the caller may; one that cannot go stays.
    private func removeQuietly(_ path: FilePath, _ field: FileField) async {
        let target = field.target(path: path)
        do {
            try await files.access.requireEverywhere(.delete, target, path: path)
            try await files.catalog.remove(app: target.app, path: path)
        } catch {
            field.logger.info("a replaced file field's file stays", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    private static func json(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// What a file-field request names: table, object, column, and the caller.
private struct FileField {
    let table: String
    let id: String
    let column: String
    let identity: Identity
    let publicPrefix: String
    let logger: Logger

    init(_ request: Request, _ context: PublicRequestContext) throws {
        let parameters = context.decodedParameters
        guard let table = parameters["table"], let id = parameters["id"] else {
            throw FileError.missingParameter("table")
        }
        guard let column = request.uri.queryParameters["field_name"].map(String.init), !column.isEmpty else {
            throw FileError.missingParameter("field_name")
        }
        self.table = table
        self.id = id
        self.column = column
        identity = context.identity
        publicPrefix = context.call.publicPrefix ?? "/\(context.identity.appId)"
        logger = context.logger
    }

    /// The upload's place: `{table}/{id}/{column}/{name}`.
    func target(column name: String, name file: String) throws -> FileRequest {
        target(path: try FilePath.root.appending(table).appending(id).appending(name).appending(file))
    }

    func target(path: FilePath) -> FileRequest {
        FileRequest(identity: identity, path: path, publicPrefix: publicPrefix, query: [:])
    }
}
