import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// `file.info` and `file.content`: one file's description and bytes for another service
/// (email attachments), with the same read check as a download by the call's identity.
struct FileContentOperations: Sendable {
    let catalog: FileCatalog
    let storage: any FileStorage
    /// The objects whose file fields some paths belong to.
    let objects: ObjectFiles
    var access: FileAccess { FileAccess(catalog: catalog, objects: objects) }

    func register(in operations: inout OperationRegistry) {
        operations.register(FileInfo.self) { request, context in
            let (_, entry) = try await readable(request, context)
            return FileInfo.Response(
                path: entry.path.description, name: entry.path.name, size: entry.size,
                contentType: entry.contentType ?? MediaTypes.type(ofName: entry.path.name))
        }
        operations.register(name: FileContent.name, callers: FileContent.callers, request: FileInfo.Request.self) {
            request, context in
            let (app, entry) = try await readable(request, context.call)
            return content(entry, app: app, eventLoop: context.channel.eventLoop)
        }
    }

    /// The file `request` names, which the call's identity may read and which is no larger than
    /// the request allows.
    private func readable(_ request: FileInfo.Request, _ context: CallContext) async throws -> (String, FileEntry) {
        guard let identity = context.identity else {
            throw ErrorEnvelope.badRequest("\(FileInfo.name) needs an identity")
        }
        let path = try FilePath(decoded: String(request.path.drop { $0 == "/" }))
        let target = FileRequest(identity: identity, path: path, publicPrefix: "", query: [:])
        let entry = path.isRoot ? nil : try await catalog.entry(app: identity.appId, path: path)
        try await access.require(.read, target, path: path, entry: entry)
        guard let entry, !entry.isDirectory else { throw FileError.notFound(path.description) }
        if let limit = request.maximumBytes, entry.size > limit {
            throw ErrorEnvelope(code: 6016, message: "'/\(path)' is larger than \(limit) bytes", status: 400)
        }
        return (identity.appId, entry)
    }

    /// The bytes of `entry`, read from storage as the caller takes them.
    private func content(_ entry: FileEntry, app: String, eventLoop: any EventLoop) -> Response {
        let headers: HTTPFields = [
            .contentType: entry.contentType ?? MediaTypes.type(ofName: entry.path.name),
            .contentLength: "\(entry.size)",
        ]
        let body = Download.body(
            storage: storage, app: app, key: entry.storageKey ?? "", range: 0..<entry.size, eventLoop: eventLoop)
        return Response(status: .ok, headers: headers, body: body)
    }
}
