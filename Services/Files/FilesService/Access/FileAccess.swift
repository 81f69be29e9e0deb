import Foundation
import Hummingbird
import InternalProtocol
import Permissions

/// The permission checks of the file API: one look-up of the cells above a path per check, or
/// for a path that belongs to a data object (``ObjectFiles``) that object's rights instead;
/// 4000 when the answer is no.
struct FileAccess: Sendable {
    let catalog: FileCatalog
    /// The objects some paths belong to.
    let objects: ObjectFiles

    /// 4000 unless the caller may perform `operation` on `path` (described by `entry` when it
    /// exists; a missing path is judged as the file or directory it would be).
    func require(
        _ operation: FileOperation, _ target: FileRequest, path: FilePath, entry: FileEntry?, directory: Bool = false
    ) async throws {
        if let allowed = try await objects.decisions(operation, on: [path], identity: target.identity)[path] {
            guard allowed else { throw FileError.noPermission(operation.rawValue.lowercased(), path: path.description) }
            return
        }
        let rules = try await catalog.rules(app: target.app, near: path)
        let isDirectory = entry?.isDirectory ?? (directory || path.isRoot)
        guard
            rules.allows(
                PermissionCaller(target.identity), operation, path: path, isDirectory: isDirectory,
                ownerID: entry?.ownerId)
        else { throw FileError.noPermission(operation.rawValue.lowercased(), path: path.description) }
    }

    /// The same check for a path whose entry is not at hand.
    func require(_ operation: FileOperation, _ target: FileRequest, path: FilePath, directory: Bool = false)
        async throws
    {
        let entry = path.isRoot ? nil : try await catalog.entry(app: target.app, path: path)
        try await require(operation, target, path: path, entry: entry, directory: directory)
    }

    /// The check on `path` and, for a directory with cells on or under it or with files of
    /// objects below, on every file below (a delete, move or copy of a directory acts on all of
    /// them, and a file's own DENY and its object's rights must hold). Answers the entry at `path`.
    @discardableResult
    func requireEverywhere(_ operation: FileOperation, _ target: FileRequest, path: FilePath) async throws -> FileEntry?
    {
        let entry = path.isRoot ? nil : try await catalog.entry(app: target.app, path: path)
        try await require(operation, target, path: path, entry: entry)
        guard entry?.isDirectory == true else { return entry }
        let rules = try await catalog.rules(app: target.app, near: path, below: true)
        let holdsObjectFiles = try await objects.mayHold(path, app: target.app)
        guard !rules.isEmpty || holdsObjectFiles else { return entry }
        try await forEachJudged(
            operation, target, directory: path, filter: ListingFilter(recursive: true), rules: rules
        ) { file, allowed in
            guard allowed else {
                throw FileError.noPermission(operation.rawValue.lowercased(), path: file.path.description)
            }
            return true
        }
        return entry
    }

    /// Calls `body` with each entry of `directory` that `filter` takes, in path order, and
    /// whether the caller may perform `operation` on it (its object's rights, else its cells in
    /// `rules`; a batch of entries at a time), until it answers false.
    func forEachJudged(
        _ operation: FileOperation, _ target: FileRequest, directory: FilePath, filter: ListingFilter, rules: FileRules,
        _ body: (FileEntry, Bool) throws -> Bool
    ) async throws {
        let caller = PermissionCaller(target.identity)
        try await catalog.forEachBatch(app: target.app, directory: directory, filter: filter) { entries in
            let decisions = try await objects.decisions(operation, on: entries.map(\.path), identity: target.identity)
            for entry in entries {
                let allowed =
                    decisions[entry.path]
                    ?? rules.allows(
                        caller, operation, path: entry.path, isDirectory: entry.isDirectory, ownerID: entry.ownerId)
                guard try body(entry, allowed) else { return false }
            }
            return true
        }
    }

    /// `PUT files/permissions/{GRANT|DENY}/{path}` with `{"permission", "user" | "role"}` sets one
    /// cell: for the server-code key, the owner of the file or directory, or a caller the app's
    /// rules allow ``FileOperation/permission`` on the path (4000 otherwise).
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
        if target.identity.keyKind != .serverCode && !owns {
            try await require(.permission, target, path: path, entry: entry)
        }
        try await catalog.setRule(
            app: target.app, path: path, principal: principal, operation: operation, decision: decision)
    }
}

/// The body of a permission change.
struct PermissionBody: Decodable {
    let permission: String?
    let user: String?
    let role: String?
}
