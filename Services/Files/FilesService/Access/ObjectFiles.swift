import DataEngine
import InternalProtocol
import Logging
import Permissions

/// Files that belong to data objects. An upload through an object's file field
/// (``FileFieldRoutes``) is kept at `{table}/{objectId}/{column}/{name}`, and every path whose
/// first three names are a table of the app, an object id and a `FILE_REF` column of that table
/// (the directory itself and everything under it) is such an object's place, as is the object's
/// directory `{table}/{objectId}` of a table with a `FILE_REF` column, whoever wrote
/// there and through whichever route. There the object's rights replace the tree's cells:
/// reading, listing and copying from it take the right to find the object, and writing,
/// deleting, moving and renaming there the right to update it, as the data permissions decide
/// them (table rules, owner policy, object ACLs) — so that no cell, such as one the owner of a
/// shared directory above sets, opens or closes one object's files. A place whose object does
/// not exist (or no longer does) is left to the server-code key, which may clear it up.
struct ObjectFiles: Sendable {
    let engine: DataEngine
    let logger: Logger

    /// The object `path` belongs to under `catalog`, if any: a file field's place, or the
    /// object's own directory above its fields (`{table}/{objectId}`), so that a listing of the
    /// table's directory names only the objects the caller may find (second probe, F11).
    static func object(of path: FilePath, in catalog: AppCatalog) -> FileObject? {
        let names = path.names
        guard names.count >= 2, let table = catalog.table(named: names[0]) else { return nil }
        let isPlace =
            names.count == 2
            ? table.columns.contains { $0.type == .fileReference }
            : table.column(named: names[2])?.type == .fileReference
        return isPlace ? FileObject(table: table.name, id: names[1]) : nil
    }

    /// Whether `path` or anything under it may belong to an object (a listing or a subtree
    /// operation there must then ask the objects).
    func mayHold(_ path: FilePath, app: String) async throws -> Bool {
        let catalog = try await engine.cache.catalog(for: app)
        let names = path.names
        if names.count >= 3 { return Self.object(of: path, in: catalog) != nil }
        let tables: [TableSchema]
        if let first = names.first {
            tables = catalog.table(named: first).map { [$0] } ?? []
        } else {
            tables = Array(catalog.tables.values)
        }
        return tables.contains { table in table.columns.contains { $0.type == .fileReference } }
    }

    /// For each of `paths` that belongs to an object, whether `identity` may perform
    /// `operation` there (its data counterpart on the object); paths of no object are absent.
    /// One statement per table named, none when no path belongs to an object.
    func decisions(_ operation: FileOperation, on paths: [FilePath], identity: Identity) async throws -> [FilePath:
        Bool]
    {
        let catalog = try await engine.cache.catalog(for: identity.appId)
        var owned: [FilePath: FileObject] = [:]
        for path in paths {
            if let object = Self.object(of: path, in: catalog) { owned[path] = object }
        }
        guard !owned.isEmpty else { return [:] }
        var allowed: Set<FileObject> = []
        for (table, objects) in Dictionary(grouping: Set(owned.values), by: \.table) {
            let ids = Set(objects.map(\.id))
            let permits = try await objectPermits(operation.objectOperation, ids: ids, table: table, identity: identity)
            let orphans = identity.keyKind == .serverCode ? ids.subtracting(permits.existing) : []
            for id in permits.permitted.union(orphans) { allowed.insert(FileObject(table: table, id: id)) }
        }
        return owned.mapValues { allowed.contains($0) }
    }

    /// The engine's answer; a table dropped since the catalog was read has no objects.
    private func objectPermits(_ operation: DataOperation, ids: Set<String>, table: String, identity: Identity)
        async throws
        -> ObjectPermits
    {
        do {
            return try await engine.permits(operation, objectIDs: ids, table: table, identity: identity, logger: logger)
        } catch let miss as ErrorEnvelope where miss.code == 1009 {  // table not found
            return ObjectPermits()
        }
    }
}

/// The object a file-field place belongs to: its table (as the catalog spells it) and its id.
struct FileObject: Hashable, Sendable {
    let table: String
    let id: String
}

extension FileOperation {
    /// What the same act takes on the object a file belongs to: reading takes Find, changing
    /// or removing the file takes Update (it is part of the object), changing its permissions
    /// the object's Permission.
    var objectOperation: DataOperation {
        switch self {
        case .read: .find
        case .write, .delete: .update
        case .permission: .permission
        }
    }
}
