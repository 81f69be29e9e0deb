import DataEngine
import InternalProtocol
import Logging
import QueryLanguage

/// Data objects in point metadata (`"owner": {"___class": "Person", …}`): a save keeps each as
/// a reference to an object of that table — saved first through the data engine when it carries
/// more than its `objectId`, checked to exist and be findable when it carries only that — and a
/// read puts back the objects the caller may find (null for those gone or hidden), one find per
/// table, so a relation never shows more than the data API would.
struct GeoDataObjects: Sendable {
    let engine: DataEngine

    /// The table a metadata value refers to, when it is a data object.
    static func table(of object: JSONObject) -> String? {
        guard let table = object["___class"]?.string, Identifier.isValid(table) else { return nil }
        return table
    }

    /// The metadata with each data object saved or checked and replaced by its reference.
    func store(_ metadata: JSONObject, identity: Identity, logger: Logger) async throws -> JSONObject {
        var stored = metadata
        for (key, value) in metadata.members {
            guard case .object(let object) = value, let table = Self.table(of: object) else { continue }
            let fields = object.members.filter { $0.key != "___class" }
            let id: String
            if fields.count == 1, let existing = object["objectId"]?.string {
                guard try await find(table, ids: [existing], identity: identity, logger: logger)[existing] != nil else {
                    throw GeoError.invalidBody("Metadata '\(key.prefix(64))' names no \(table) object '\(existing)'")
                }
                id = existing
            } else {
                let saved = try await engine.save(table, object: JSONObject(fields), identity: identity, logger: logger)
                guard let savedID = try JSONParser.parse(saved).object?["objectId"]?.string else {
                    throw ErrorEnvelope.internalError
                }
                id = savedID
            }
            stored[key] = .object(JSONObject([("___class", .string(table)), ("objectId", .string(id))]))
        }
        return stored
    }

    /// The points with each data-object reference in their metadata replaced by the object.
    func load(_ points: [GeoPoint], identity: Identity, logger: Logger) async throws -> [GeoPoint] {
        let loaded = try await load(points.map(\.metadata), identity: identity, logger: logger)
        return zip(points, loaded).map { point, metadata in
            var point = point
            point.metadata = metadata
            return point
        }
    }

    /// ``load(_:identity:logger:)`` for a search's answer: its points and its clusters (whose
    /// merged metadata lists references too).
    func load(_ items: [GeoItem], identity: Identity, logger: Logger) async throws -> [GeoItem] {
        let metadata = items.map { item -> JSONObject? in
            switch item {
            case .point(let point): point.metadata
            case .cluster(let cluster): cluster.metadata
            }
        }
        let loaded = try await load(metadata, identity: identity, logger: logger)
        return zip(items, loaded).map { item, metadata in
            switch item {
            case .point(var point):
                point.metadata = metadata
                return .point(point)
            case .cluster(var cluster):
                cluster.metadata = metadata
                return .cluster(cluster)
            }
        }
    }

    /// Each metadata object with its references (as members, or inside a cluster's lists of
    /// values) replaced by the objects the caller may find, null for the others.
    func load(_ metadata: [JSONObject?], identity: Identity, logger: Logger) async throws -> [JSONObject?] {
        var wanted: [String: Set<String>] = [:]
        for object in metadata {
            for value in object?.members.map(\.value) ?? [] {
                for reference in Self.references(in: value) {
                    wanted[reference.table, default: []].insert(reference.id)
                }
            }
        }
        guard !wanted.isEmpty else { return metadata }
        var found: [String: [String: JSONValue]] = [:]
        for (table, ids) in wanted {
            found[table] = try await find(table, ids: Array(ids), identity: identity, logger: logger)
        }
        func replaced(_ value: JSONValue) -> JSONValue {
            if case .array(let items) = value { return .array(items.map(replaced)) }
            guard let reference = Self.reference(value) else { return value }
            return found[reference.table]?[reference.id] ?? .null
        }
        return metadata.map { object in
            object.map { JSONObject($0.members.map { ($0.key, replaced($0.value)) }) }
        }
    }

    /// A value's reference, when it is one.
    private static func reference(_ value: JSONValue) -> (table: String, id: String)? {
        guard case .object(let object) = value, let table = table(of: object), let id = object["objectId"]?.string
        else { return nil }
        return (table, id)
    }

    /// The references a metadata value holds: itself, or the items of a cluster's list.
    private static func references(in value: JSONValue) -> [(table: String, id: String)] {
        if case .array(let items) = value { return items.compactMap(reference) }
        return reference(value).map { [$0] } ?? []
    }

    /// The objects of `table` among `ids` the caller may find, by id, a find page at a time;
    /// none when the table is gone or hidden whole.
    private func find(_ table: String, ids: [String], identity: Identity, logger: Logger) async throws -> [String:
        JSONValue]
    {
        var objects: [String: JSONValue] = [:]
        for start in stride(from: 0, to: ids.count, by: FindQuery.maximumPageSize) {
            let chunk = ids[start..<min(start + FindQuery.maximumPageSize, ids.count)]
            var query = FindQuery()
            query.condition = .membership(
                .property(PropertyPath(["objectId"])), chunk.map(ValueExpression.string), negated: false)
            query.pageSize = chunk.count
            let texts: [String]
            do {
                texts = try await engine.find(table, query: query, identity: identity, logger: logger)
            } catch let error as ErrorEnvelope where Self.hidesEverything(error, table: table) {
                return [:]
            }
            for text in texts {
                let object = try JSONParser.parse(text)
                if let id = object.object?["objectId"]?.string { objects[id] = object }
            }
        }
        return objects
    }

    /// Whether a find's refusal means no object of the table can be shown: the table is gone
    /// (1009) or the caller may find none of its rows (1023).
    private static func hidesEverything(_ error: ErrorEnvelope, table: String) -> Bool {
        error.code == DataError.tableNotFound(table).code
            || error.code == DataError.permissionDenied("", table: table).code
    }
}
