import DataEngine
import InternalProtocol

/// One QuickBlox create or update record, read from a JSON body (`{"name": "x", "inc":
/// {"rating": 1}, "pull": {"tags": {"lt": 3}}, "permissions": {…}}`) or a form body
/// (`name=x&inc[rating]=1&pull[tags][lt]=3&permissions[read][access]=open`), as the data engine
/// takes it: plain values stay values, QuickBlox's update operators become the engine's
/// `{"___operation": …}` changes (`inc` → INCREMENT, `push` → ARRAY_PUSH, `pull` → ARRAY_PULL
/// with its filter operator, `pull_all` → ARRAY_PULL_ALL, `pop` → ARRAY_POP, `add_to_set` →
/// ARRAY_ADD_TO_SET, `field[i]` → JSON_SET on `$[i]`).
struct QuickBloxWrite: Sendable {
    /// The changes in the engine's form, columns in the order the body named them.
    var changes = JSONObject()
    /// The record's permissions, when the body sets them.
    var permissions: QuickBloxPermissions?
    /// The record's id (`_id` or `id`), which an update-many record names.
    var id: String?

    /// One key of the body as a path (`inc[rating]` → `inc`, `rating`) and its value.
    struct Entry: Sendable {
        var path: [String]
        var value: JSONValue
    }

    /// The operators QuickBlox updates take.
    enum Operator: String, Sendable {
        case inc, push, pull, pullAll = "pull_all", pop, addToSet = "add_to_set"
    }

    /// The fields QuickBlox keeps itself, never written from a body.
    static let systemFields: Set<String> = ["user_id", "created_at", "updated_at"]

    /// Reads a JSON object body.
    init(json object: JSONObject) throws {
        try self.init(entries: try Self.entries(json: object))
    }

    /// Reads a form body's pairs (already percent-decoded); the value `null` clears a field.
    init(form pairs: [(name: String, value: String)]) throws {
        try self.init(
            entries: try pairs.map { pair in
                Entry(path: try Self.keyPath(pair.name), value: pair.value == "null" ? .null : .string(pair.value))
            })
    }

    /// Reads entries already split into paths.
    init(entries: [Entry]) throws {
        var fields = QuickBloxFieldChanges()
        var permissionEntries: [Entry] = []
        for entry in entries {
            let head = entry.path[0]
            if head == "_id" || head == "id", entry.path.count == 1 {
                id = try Self.identifier(entry.value)
            } else if head == "permissions" {
                permissionEntries.append(Entry(path: Array(entry.path.dropFirst()), value: entry.value))
            } else if Self.systemFields.contains(head) {
                continue
            } else {
                try fields.add(entry)
            }
        }
        changes = try fields.changes()
        if !permissionEntries.isEmpty { permissions = try QuickBloxPermissions(entries: permissionEntries) }
    }

    /// A JSON body's keys as entries: bracketed keys as paths, and an operator's object
    /// (`{"inc": {"rating": 1}}`, `{"pull": {"tags": {"lt": 3}}}`) as one entry per field.
    static func entries(json object: JSONObject) throws -> [Entry] {
        var entries: [Entry] = []
        for (key, value) in object.members {
            let path = try keyPath(key)
            if path.count == 1, let op = Operator(rawValue: key), case .object(let fields) = value {
                for (field, argument) in fields.members {
                    if op == .pull, case .object(let filter) = argument {
                        entries += filter.members.map { Entry(path: [key, field, $0.key], value: $0.value) }
                    } else {
                        entries.append(Entry(path: [key, field], value: argument))
                    }
                }
            } else if path == ["permissions"], case .object(let rules) = value {
                entries += try flatten(rules, under: ["permissions"])
            } else {
                entries.append(Entry(path: path, value: value))
            }
        }
        return entries
    }

    /// `permissions: {read: {access: open}}` as `permissions/read/access = open`.
    private static func flatten(_ object: JSONObject, under prefix: [String]) throws -> [Entry] {
        guard prefix.count <= 3 else { throw QuickBloxError.malformed("'permissions' nests too deep") }
        return try object.members.flatMap { member -> [Entry] in
            if case .object(let inner) = member.value { return try flatten(inner, under: prefix + [member.key]) }
            return [Entry(path: prefix + [member.key], value: member.value)]
        }
    }

    /// `inc[rating]` → `["inc", "rating"]`, `push[tags][]` → `["push", "tags", ""]`, `name` →
    /// `["name"]`; 1022 for a key whose brackets do not close.
    static func keyPath(_ key: String) throws -> [String] {
        guard let open = key.firstIndex(of: "[") else { return [key] }
        var path = [String(key[..<open])]
        var rest = key[open...]
        while !rest.isEmpty {
            guard path.count < 5 else {
                throw QuickBloxError.malformed("The key '\(key.prefix(100))' is not a field, operator or permission")
            }
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else {
                throw QuickBloxError.malformed("The key '\(key.prefix(100))' has brackets that do not close")
            }
            path.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        guard !path[0].isEmpty, path.count <= 5 else {
            throw QuickBloxError.malformed("The key '\(key.prefix(100))' is not a field, operator or permission")
        }
        return path
    }

    private static func identifier(_ value: JSONValue) throws -> String {
        guard let id = value.string, !id.isEmpty else { throw QuickBloxError.malformed("'_id' must be a string") }
        return id
    }
}

/// What a QuickBlox body does to each field, gathered before it becomes the engine's changes:
/// a field is either set or changed by one operator (index writes count as one).
struct QuickBloxFieldChanges: Sendable {
    private enum Change: Sendable {
        case value(JSONValue)
        case increment(JSONValue)
        case values(QuickBloxWrite.Operator, [JSONValue])
        case pull(filter: String, JSONValue)
        case pop(Int64)
        case indexes([(Int, JSONValue)])
    }

    private var order: [String] = []
    private var changesByField: [String: Change] = [:]

    /// At most this many values per array operator, as the engine takes them.
    static let valueLimit = 100

    /// Adds one entry of the body.
    mutating func add(_ entry: QuickBloxWrite.Entry) throws {
        let path = entry.path
        if path.count >= 2, let op = QuickBloxWrite.Operator(rawValue: path[0]) {
            try add(op, field: path[1], filter: path.count > 2 ? path[2] : nil, entry.value)
        } else if path.count == 1 {
            try set(path[0], .value(entry.value))
        } else if path.count == 2, let index = Int(path[1]), index >= 0 {
            var indexes: [(Int, JSONValue)] = []
            if case .indexes(let earlier)? = changesByField[path[0]] { indexes = earlier }
            guard indexes.count < Self.valueLimit else {
                throw QuickBloxError.malformed("'\(path[0])' is written at more than \(Self.valueLimit) indexes")
            }
            indexes.append((index, entry.value))
            try set(path[0], .indexes(indexes), merging: true)
        } else {
            throw QuickBloxError.malformed("'\(path.joined(separator: "."))' is not a field or an update operator")
        }
    }

    private mutating func add(_ op: QuickBloxWrite.Operator, field: String, filter: String?, _ value: JSONValue)
        throws
    {
        switch op {
        case .inc:
            try set(field, .increment(try Self.number(value, field)))
        case .pop:
            guard let end = value.integerValue, end == 1 || end == -1 else {
                throw QuickBloxError.malformed("pop[\(field)] takes 1 (the last element) or -1 (the first)")
            }
            try set(field, .pop(end))
        case .pull where filter != nil && filter != "":
            let argument =
                switch filter {
                case "in", "nin": Self.list(value)
                case "lt", "lte", "gt", "gte": (try? Self.number(value, field)) ?? value
                default: value
                }
            try set(field, .pull(filter: filter ?? "eq", argument))
        case .pull:
            try set(field, .pull(filter: "eq", value))
        case .push, .pullAll, .addToSet:
            var values: [JSONValue] = []
            if case .values(op, let earlier)? = changesByField[field] { values = earlier }
            values += value.array ?? [value]
            guard values.count <= Self.valueLimit else {
                throw QuickBloxError.malformed("\(op.rawValue)[\(field)] takes at most \(Self.valueLimit) values")
            }
            try set(field, .values(op, values), merging: true)
        }
    }

    private mutating func set(_ field: String, _ change: Change, merging: Bool = false) throws {
        if let earlier = changesByField[field] {
            guard merging, Self.sameKind(earlier, change) else {
                throw QuickBloxError.malformed("'\(field)' is changed twice in one request")
            }
        } else {
            order.append(field)
        }
        changesByField[field] = change
    }

    private static func sameKind(_ earlier: Change, _ later: Change) -> Bool {
        switch (earlier, later) {
        case (.indexes, .indexes): true
        case (.values(let a, _), .values(let b, _)): a == b
        default: false
        }
    }

    /// The changes in the engine's form.
    func changes() throws -> JSONObject {
        JSONObject(order.compactMap { field in changesByField[field].map { (field, Self.engineForm($0)) } })
    }

    private static func engineForm(_ change: Change) -> JSONValue {
        switch change {
        case .value(let value): return value
        case .increment(let amount): return operation("INCREMENT", amount)
        case .values(let op, let values):
            let name = [.push: "ARRAY_PUSH", .pullAll: "ARRAY_PULL_ALL", .addToSet: "ARRAY_ADD_TO_SET"][op] ?? ""
            return operation(name, .array(values))
        case .pull(let filter, let value):
            var object = operation("ARRAY_PULL", value).object ?? JSONObject()
            object["operator"] = .string(filter)
            return .object(object)
        case .pop(let end): return operation("ARRAY_POP", .integer(end))
        case .indexes(let writes):
            return operation("JSON_SET", .object(JSONObject(writes.map { ("$[\($0.0)]", $0.1) })))
        }
    }

    private static func operation(_ name: String, _ args: JSONValue) -> JSONValue {
        .object(JSONObject([("___operation", .string(name)), ("args", args)]))
    }

    /// `inc`'s amount or an ordering filter's bound: a JSON number, or a form's numeric text
    /// (other form values stay text: a form cannot say which an array holds).
    private static func number(_ value: JSONValue, _ field: String) throws -> JSONValue {
        switch value {
        case .integer, .number: return value
        case .string(let text):
            if let integer = Int64(text) { return .integer(integer) }
            if let number = Double(text), number.isFinite { return .number(number) }
        default: break
        }
        throw QuickBloxError.malformed("inc[\(field)] takes a number")
    }

    /// `in`/`nin` filter values: a JSON array, or a form's comma-separated text.
    private static func list(_ value: JSONValue) -> JSONValue {
        guard case .string(let text) = value else { return value }
        return .array(text.split(separator: ",", omittingEmptySubsequences: false).map { .string(String($0)) })
    }
}

/// The QuickBlox routes' own refusals, in the data API's codes.
enum QuickBloxError {
    /// 1022: a body the QuickBlox API does not take.
    static func malformed(_ message: String) -> ErrorEnvelope {
        DataError.invalidBody(message)
    }
}
