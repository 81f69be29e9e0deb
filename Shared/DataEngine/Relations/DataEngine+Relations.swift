import InternalProtocol
import Logging
import Permissions
import QueryLanguage

/// What a relation change does to a parent's children.
package enum RelationChange: String, Sendable {
    /// The named children become the only ones (`POST`).
    case set
    /// The named children join the existing ones (`PUT`).
    case add
    /// The named children leave the relation (`DELETE`).
    case delete

    /// The parent-side operations it needs.
    var parentOperations: [DataOperation] {
        switch self {
        case .set: [.addRelation, .deleteRelation]
        case .add: [.addRelation]
        case .delete: [.deleteRelation]
        }
    }
}

/// A relation column resolved for one request: the parent table, the relation and the child table.
struct ResolvedRelation {
    let catalog: AppCatalog
    let parent: TableSchema
    let relation: RelationSchema
    let child: TableSchema
}

extension DataEngine {
    /// Sets, adds or deletes children of object `parentID`'s relation `argument`; answers how many
    /// children the relation now holds (set: those linked before included), it linked (add:
    /// children already linked do not count) or unlinked (delete); unknown ids never count. Set and add declare the column when the argument names its table and
    /// cardinality. The parent needs the operation's right, the children Find.
    package func changeRelation(
        _ change: RelationChange, table tableName: String, parentID: String, argument: RelationColumnArgument,
        children: RelationChildren, identity: Identity, logger: Logger
    ) async throws -> Int {
        let (catalog, parent) = try await table(tableName, app: identity.appId)
        if change != .delete, !parent.hasProperty(named: argument.column), let definition = argument.definition {
            // Refused for every row before any DDL; else declared in the change's own transaction,
            // so a refused change leaves no column behind (second probe, F4).
            for operation in change.parentOperations {
                _ = try access.authorize(identity, operation, table: parent.name, catalog: catalog)
            }
            guard catalog.dynamicSchema else {
                throw DataError.dynamicSchemaDisabled([argument.column], table: parent.name)
            }
            return try await mappingErrors(table: parent.name, logger: logger) {
                try await editor(logger).change(appID: identity.appId) { session, fresh in
                    try await Self.declare(definition, on: tableName, catalog: fresh, session: session)
                } then: { session, updated in
                    let resolved = try declared(argument, on: tableName, catalog: updated)
                    return try await changeRelation(
                        change, resolved, parentID: parentID, children: children, identity: identity, session: session)
                }
            }
        }
        let resolved = try await relation(
            argument, of: tableName, declaring: change != .delete, identity: identity, logger: logger)
        return try await mappingErrors(table: resolved.parent.name, logger: logger) {
            try await session(logger).transaction { session in
                try await changeRelation(
                    change, resolved, parentID: parentID, children: children, identity: identity, session: session)
            }
        }
    }

    /// ``changeRelation(_:table:parentID:argument:children:identity:logger:)`` inside the
    /// transaction `session` (a unit of work's, a deep save's).
    func changeRelation(
        _ change: RelationChange, _ resolved: ResolvedRelation, parentID: String, children: RelationChildren,
        identity: Identity, session: DatabaseSession
    ) async throws -> Int {
        var parentGrants: [AccessGrant] = []
        for operation in change.parentOperations {
            parentGrants.append(
                try access.authorize(identity, operation, table: resolved.parent.name, catalog: resolved.catalog))
        }
        let childGrant = try access.authorize(identity, .find, table: resolved.child.name, catalog: resolved.catalog)
        let statements = RelationStatements(
            resolved: resolved, parentID: parentID,
            relations: RelationPaths(catalog: resolved.catalog, access: access, identity: identity))
        let selection = try statements.selection(children, grant: childGrant)
        guard try await session.column(statements.lockParent(grants: parentGrants), as: String.self).count == 1 else {
            throw try await missing(
                parentID, table: resolved.parent.name, appID: identity.appId, operation: change.parentOperations[0],
                session: session)
        }
        return try await apply(change, statements: statements, selection: selection, session: session)
    }

    private func apply(
        _ change: RelationChange, statements: RelationStatements, selection: RelationStatements.Selection,
        session: DatabaseSession
    ) async throws -> Int {
        let relation = statements.resolved.relation
        if !relation.isMany && change != .delete {
            try await requireOneChild(change, statements: statements, selection: selection, session: session)
        }
        if change == .set { _ = try await session.rows(try statements.unlink(selection, others: true)) }
        let counted = try change == .delete ? statements.unlink(selection) : statements.link(selection)
        let changed = Int(try await session.column(counted, as: Int64.self).first ?? 0)
        guard change == .set else { return changed }
        // A set answers the children it leaves linked, those linked before included.
        return Int(try await session.column(statements.countLinks(), as: Int64.self).first ?? 0)
    }

    /// 1028 when a one-to-one relation would end with more than one child: the selection names
    /// several, or an add meets a child already there.
    private func requireOneChild(
        _ change: RelationChange, statements: RelationStatements, selection: RelationStatements.Selection,
        session: DatabaseSession
    ) async throws {
        let (relation, parent) = (statements.resolved.relation, statements.resolved.parent)
        if try await session.column(try statements.countSelected(selection, upTo: 2), as: Int64.self).first ?? 0 > 1 {
            throw DataError.oneToOneHoldsOne(relation.name, table: parent.name, reason: "it takes one child object")
        }
        if change == .add, try await session.column(statements.countLinks(), as: Int64.self).first ?? 0 > 0 {
            throw DataError.oneToOneHoldsOne(
                relation.name, table: parent.name, reason: "it already holds an object; set replaces it")
        }
    }

    /// A page of the children object `parentID` links to through relation `argument` (their own
    /// find rights apply; link order unless `query` sorts). The parent needs LoadRelations.
    package func loadRelation(
        table tableName: String, parentID: String, argument: RelationColumnArgument, query: FindQuery,
        identity: Identity, logger: Logger
    ) async throws -> [String] {
        let resolved = try await relation(argument, of: tableName, declaring: false, identity: identity, logger: logger)
        let parentGrant = try access.authorize(
            identity, .loadRelations, table: resolved.parent.name, catalog: resolved.catalog)
        let childGrant = try access.authorize(identity, .find, table: resolved.child.name, catalog: resolved.catalog)
        let session = session(logger)
        let statements = RelationStatements(resolved: resolved, parentID: parentID)
        guard try await session.column(statements.findParent(grant: parentGrant), as: Int64.self).first == 1 else {
            throw try await missing(
                parentID, table: resolved.parent.name, appID: identity.appId, operation: .loadRelations,
                session: session)
        }
        var find = FindStatement(
            query: query, table: resolved.child, schema: resolved.catalog.schemaName, grant: childGrant)
        find.scope = LinkScope(
            schema: resolved.catalog.schemaName, linkTable: resolved.relation.linkTable, parentID: parentID)
        find.relations = RelationPaths(catalog: resolved.catalog, access: access, identity: identity)
        let sql = try find.page()
        return try await mappingErrors(table: resolved.child.name, logger: logger) {
            try await session.column(sql, as: String.self)
        }
    }

    /// The relation `argument` names on `tableName`, declared first when `declaring` and the
    /// argument carries a table and cardinality (dynamic schema must be on, as for new columns).
    func relation(
        _ argument: RelationColumnArgument, of tableName: String, declaring: Bool, identity: Identity, logger: Logger
    ) async throws -> ResolvedRelation {
        let (catalog, parent) = try await table(tableName, app: identity.appId)
        if let existing = parent.relation(named: argument.column) {
            return try resolved(existing, parent: parent, catalog: catalog, argument: argument)
        }
        if parent.column(named: argument.column) != nil {
            throw DataError.notARelation(argument.column, table: parent.name)
        }
        guard declaring, let definition = argument.definition else {
            throw DataError.columnNotFound(argument.column, table: parent.name)
        }
        guard catalog.dynamicSchema else {
            throw DataError.dynamicSchemaDisabled([argument.column], table: parent.name)
        }
        let updated = try await mappingErrors(table: parent.name, logger: logger) {
            try await editor(logger).change(appID: identity.appId) { session, fresh in
                try await Self.declare(definition, on: tableName, catalog: fresh, session: session)
            }
        }
        return try declared(argument, on: tableName, catalog: updated)
    }

    /// Declares `definition` on `tableName` inside a schema change, unless another request has
    /// since the cache was read.
    private static func declare(
        _ definition: RelationDefinition, on tableName: String, catalog: AppCatalog, session: DatabaseSession
    )
        async throws
    {
        guard let table = catalog.table(named: tableName) else { throw DataError.tableNotFound(tableName) }
        guard table.relation(named: definition.name) == nil else { return }
        try await SchemaEditor.addRelation(definition, table: table, catalog: catalog, session: session)
    }

    /// The relation `argument` names on `tableName` once declared in `catalog`.
    private func declared(_ argument: RelationColumnArgument, on tableName: String, catalog: AppCatalog) throws
        -> ResolvedRelation
    {
        guard let table = catalog.table(named: tableName), let relation = table.relation(named: argument.column) else {
            throw DataError.columnNotFound(argument.column, table: tableName)
        }
        return try resolved(relation, parent: table, catalog: catalog, argument: argument)
    }

    /// 1024 when the argument declares another child table or cardinality than the column has.
    private func resolved(
        _ relation: RelationSchema, parent: TableSchema, catalog: AppCatalog, argument: RelationColumnArgument
    ) throws -> ResolvedRelation {
        if let table = argument.childTable, table.lowercased() != relation.relatedTable.lowercased() {
            throw DataError.schemaConflict(
                "Relation '\(relation.name)' of table '\(parent.name)' points at '\(relation.relatedTable)', not '\(table)'"
            )
        }
        if let isMany = argument.isMany, isMany != relation.isMany {
            throw DataError.schemaConflict(
                "Relation '\(relation.name)' of table '\(parent.name)' is 1:\(relation.cardinality)")
        }
        guard let child = catalog.table(named: relation.relatedTable) else {
            throw DataError.tableNotFound(relation.relatedTable)
        }
        return ResolvedRelation(catalog: catalog, parent: parent, relation: relation, child: child)
    }
}
