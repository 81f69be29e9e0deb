import Foundation
import InternalProtocol
import QueryLanguage

/// A parsed data query: the DataQueryBuilder parameters every SDK variant sends, whichever way
/// it sends them (GET query string, POST body, transaction FIND payload).
package struct FindQuery: Sendable {
    /// `where`.
    package var condition: Condition?
    /// `props` / `property`; nil selects every column.
    package var properties: [SelectItem]?
    /// `*` among `props`: every column (less `excludeProps`) besides the items ``properties`` adds
    /// (aliases, functions, related columns).
    package var allColumns = false
    /// `excludeProps`.
    package var excluded: [String] = []
    /// `sortBy`.
    package var sort: [SortItem] = []
    /// `groupBy`.
    package var groupBy: [ValueExpression] = []
    /// `having`.
    package var having: Condition?
    /// `distinct`.
    package var distinct = false
    /// `pageSize`, 1 through ``maximumPageSize``.
    package var pageSize = FindQuery.defaultPageSize
    /// `offset`, zero or more.
    package var offset = 0
    /// `loadRelations`: relation paths (`a.b.c`, `*` for every relation of a level) to load with
    /// each object.
    package var relationPaths: [[String]] = []
    /// `relationsDepth`: every relation down to this many levels, 0 through ``maximumRelationsDepth``.
    package var relationsDepth = 0
    /// `relationsPageSize`: children per loaded 1:N relation, 1 through ``maximumPageSize``.
    package var relationsPageSize = FindQuery.defaultPageSize
    /// Which children of a relation the found objects load, by relation name (BQL's `join r having
    /// condition`); relations not named load every child.
    package var relationConditions: [String: Condition] = [:]

    /// The contract's paging defaults and limit.
    package static let defaultPageSize = 10
    /// The largest page.
    package static let maximumPageSize = 100
    /// The deepest relation loading.
    package static let maximumRelationsDepth = 10

    /// Whether objects come with related objects (asked for, or auto-loaded columns).
    var loadsRelations: Bool { !relationPaths.isEmpty || relationsDepth > 0 }

    /// An unfiltered first page.
    package init() {}

    /// Reads every parameter from `parameters`; page limits apply unless `paged` is false
    /// (counts and single-object reads ignore paging).
    package init(_ parameters: QueryParameters, paged: Bool = true) throws {
        do {
            try read(parameters, paged: paged)
        } catch let error as QueryLanguageError {
            throw DataError.from(error)
        } catch let error as ErrorEnvelope {
            throw error
        } catch {
            throw DataError.invalidQuery("\(error)")
        }
    }

    private mutating func read(_ parameters: QueryParameters, paged: Bool) throws {
        if let text = parameters.scalar("where"), !text.isEmpty {
            condition = try QueryParser.condition(text)
        }
        if let text = parameters.scalar("having"), !text.isEmpty { having = try QueryParser.condition(text) }
        let props = try parameters.list("props") + parameters.list("property")
        allColumns = props.contains("*")
        if !props.isEmpty, props != ["*"] {
            // The same item named twice (in `props` and `property`, say) is selected once.
            var seen: Set<SelectItem> = []
            properties = try props.filter { $0 != "*" }.map { item throws in try QueryParser.selectItem(item) }
                .filter { seen.insert($0).inserted }
        }
        excluded = try parameters.list("excludeProps")
        sort = try parameters.list("sortBy").map { item throws in try QueryParser.sortItem(item) }
        groupBy = try parameters.list("groupBy").map { item throws in try QueryParser.value(item) }
        distinct = parameters.scalar("distinct")?.lowercased() == "true"
        if paged {
            pageSize = try parameters.integer("pageSize", default: Self.defaultPageSize, in: 1...Self.maximumPageSize)
            offset = try parameters.integer("offset", default: 0, in: 0...Int(Int32.max))
        }
        relationsDepth = try parameters.integer("relationsDepth", default: 0, in: 0...Self.maximumRelationsDepth)
        relationsPageSize = try parameters.integer(
            "relationsPageSize", default: Self.defaultPageSize, in: 1...Self.maximumPageSize)
        relationPaths = try parameters.list("loadRelations").map(Self.relationPath)
    }

    /// `a.b.c` as segments, each a relation name or `*`.
    private static func relationPath(_ text: String) throws -> [String] {
        let segments = text.split(separator: ".", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard segments.count <= maximumRelationsDepth + 1 else {
            throw DataError.queryTooComplex(
                "Relation path '\(text)' is deeper than \(maximumRelationsDepth + 1) levels")
        }
        for segment in segments where segment != "*" && !Identifier.isValid(segment) {
            throw DataError.invalidName(segment)
        }
        return segments
    }
}

/// Query parameters from any encoding, normalised to names with lists of strings.
package struct QueryParameters: Sendable {
    private var values: [String: [String]] = [:]

    /// No parameters.
    package init() {}

    /// Adds one raw value; comma lists split at top-level commas for list parameters.
    package mutating func add(_ name: String, _ value: String) {
        values[name, default: []].append(value)
    }

    /// The last value of `name`.
    package func scalar(_ name: String) -> String? {
        values[name]?.last
    }

    /// Every item of `name`: each value split at commas outside parentheses and quotes. The
    /// text's length is checked before it is split and the item count while it is.
    package func list(_ name: String, limits: QueryLimits = .standard) throws -> [String] {
        let raw = values[name] ?? []
        guard raw.reduce(0, { $0 + $1.utf8.count }) <= limits.maximumLength else {
            throw DataError.queryTooComplex("\(name) is longer than \(limits.maximumLength) bytes")
        }
        var items: [String] = []
        for value in raw {
            for item in Self.splitTopLevel(value) where !item.isEmpty {
                items.append(item)
                if items.count > limits.maximumListItems {
                    throw DataError.queryTooComplex("\(name) has more than \(limits.maximumListItems) items")
                }
            }
        }
        return items
    }

    /// The integer value of `name` within `range`.
    package func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws
        -> Int
    {
        guard let text = scalar(name), !text.isEmpty else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            let bounds =
                range.upperBound == Int(Int32.max)
                ? "of at least \(range.lowerBound)" : "between \(range.lowerBound) and \(range.upperBound)"
            throw DataError.invalidParameter("\(name) must be an integer \(bounds), got '\(text)'")
        }
        return value
    }

    /// Parameters from a URL query (`props=a,b`, repeated `property=`).
    package init(queryItems: [(name: String, value: String)]) {
        for (name, value) in queryItems { add(name, value) }
    }

    /// Parameters from a JSON body; strings, numbers, booleans and arrays of them are accepted
    /// (Swift sends `props` as an array and `relationsDepth` as a string).
    package init(body: JSONObject, renaming names: [String: String] = [:]) throws {
        for (key, value) in body.members {
            let name = names[key] ?? key
            switch value {
            case .null: continue
            case .array(let items):
                for item in items { add(name, try Self.text(item, name)) }
            default: add(name, try Self.text(value, name))
            }
        }
    }

    private static func text(_ value: JSONValue, _ name: String) throws -> String {
        switch value {
        case .string(let text): return text
        case .integer(let integer): return String(integer)
        case .number(let number): return String(number)
        case .bool(let bool): return String(bool)
        default: throw DataError.invalidParameter("\(name) must be a string, number or list")
        }
    }

    /// Splits at commas that are outside parentheses and quoted literals, trimming items.
    static func splitTopLevel(_ text: String) -> [String] {
        var items: [String] = []
        var current = ""
        var depth = 0
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "(" {
                depth += 1
            } else if character == ")" {
                depth -= 1
            } else if character == ",", depth == 0 {
                items.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                continue
            }
            current.append(character)
        }
        items.append(current.trimmingCharacters(in: .whitespaces))
        return items
    }
}
