import Foundation
import Hummingbird
import InternalProtocol
import Permissions

/// The permission checks of the file API: one look-up of the cells above a path per check,
/// 4000 when the model denies.
struct FileAccess: Sendable {
    let catalog: FileCatalog

    /// 4000 unless the caller may perform `operation` on `path` (described by `entry` when it
    /// exists; a missing path is judged as the file or directory it would be).
    func require(
        _ operation: FileOperation, _ target: FileRequest, path: FilePath, entry: FileEntry?, directory: Bool = false
    ) async throws {
        let rules = try await catalog.rules(app: target.app, near: path)
        let isDirectory = entry?.isDirectory ?? (directory || path.isRoot)
        guard rules.allows(PermissionCaller(target.identity), operation, path: path, isDirectory: isDirectory, ownerID: entry?.ownerId)
        else { throw FileError.noPermission(operation.rawValue.lowercased(), path: path.description) }
    }

    /// The same check for a path whose entry is not at hand.
    func require(_ operation: FileOperation, _ target: FileRequest, path: FilePath, directory: Bool = false) async throws {
        let entry = path.isRoot ? nil : try await catalog.entry(app: target.app, path: path)
        try await require(operation, target, path: path, entry: entry, directory: directory)
    }

    /// The check on `path` and, for a directory with cells on or under it, on every file below
    /// (a delete, move or copy of a directory acts on all of them, and a file's own DENY must
    /// hold). Answers the entry at `path`.
    @discardableResult
    func requireEverywhere(_ operation: FileOperation, _ target: FileRequest, path: FilePath) async throws -> FileEntry? {
        let entry = path.isRoot ? nil : try await catalog.entry(app: target.app, path: path)
        try await require(operation, target, path: path, entry: entry)
        guard entry?.isDirectory == true else { return entry }
        let rules = try await catalog.rules(app: target.app, near: path, below: true)
        guard !rules.isEmpty else { return entry }
        let caller = PermissionCaller(target.identity)
        try await catalog.forEach(app: target.app, directory: path, filter: ListingFilter(recursive: true)) { file in
            guard rules.allows(caller, operation, path: file.path, isDirectory: false, ownerID: file.ownerId) else {
                throw FileError.noPermission(operation.rawValue.lowercased(), path: file.path.description)
            }
            return true
        }
        return entry
    }

    /// `PUT files/permissions/{GRANT|DENY}/{path}` with `{"permission", "user" | "role"}`: the
    /// server-code key, or the owner of the file or directory, sets one cell.
    func change(_ target: FileRequest, _ request: Request, decision: String, path: FilePath) async throws {
        guard let decision = PermissionDecision(rawValue: decision.uppercased()) else {
            throw ErrorEnvelope.endpointNotFound(method: "PUT", path: "files/" + target.path.description)
        }
        let body: PermissionBody = try await JSONCommandBody.read(request)
        guard let name = body.permission, let operation = FileOperation(rawValue: name.uppercased()) else {
            throw FileError.missingParameter("permission")
        }
        let principal: Principal
        switch (body.user, body.role) {
        case (let user?, nil) where !user.isEmpty: principal = .user(user)
        case (nil, let role?) where !role.isEmpty: principal = .role(role)
        default: throw FileError.invalidBody("Name one 'user' or one 'role'")
        }
        let entry = path.isRoot ? nil : try await catalog.entry(app: target.app, path: path)
        guard path.isRoot || entry != nil else { throw FileError.notFound(path.description) }
        let owns = target.identity.userId != nil && entry?.ownerId == target.identity.userId
        guard target.identity.keyKind == .serverCode || owns else {
            throw FileError.noPermission("change the permissions of", path: path.description)
        }
        try await catalog.setRule(app: target.app, path: path, principal: principal, operation: operation, decision: decision)
    }
}

/// The body of a permission change.
struct PermissionBody: Decodable {
    let permission: String?
    let user: String?
    let role: String?
}
