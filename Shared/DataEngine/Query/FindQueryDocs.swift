import InternalProtocol
import QueryLanguage

/// The query parameters of the data query language, as `openapi.json` describes them: every
/// route that finds, counts or reads objects (data, users, relations) lists these, each with
/// the bounds ``FindQuery`` reads it within.
package enum FindQueryDocs {
    package typealias Parameter = RouteDoc.QueryParameter

    // MARK: Pieces

    /// The longest text of one parameter (``QueryLimits/standard``). The parser counts UTF-8
    /// bytes where JSON Schema counts characters, so a text of non-ASCII characters may be
    /// refused below this length.
    package static let textLength = QueryLimits.standard.maximumLength

    /// A text in the query language (a condition, an expression list): only its length is
    /// stated, the grammar being too rich for a pattern.
    package static let text = APISchema.string.length(0, textLength)

    /// A table, column or relation name as ``Identifier/isValid(_:)`` takes it, unanchored.
    package static let namePattern = "[A-Za-z][A-Za-z0-9_]{0,62}|" + ParentReference.column

    /// A table, column or relation name.
    package static let name = APISchema.string.matching("^(?:" + namePattern + ")$")

    /// `loadRelations`: comma-separated relation paths (`a.b.c`, each level a name or `*`, at
    /// most ``FindQuery/maximumRelationsDepth`` + 1 levels); items and levels may be padded
    /// with spaces or tabs and empty items are skipped, as ``FindQuery`` splits them.
    package static let relationPaths: APISchema = {
        let level = "(?:\\*|" + namePattern + ")"
        let path = level + "(?:[ \\t]*\\.[ \\t]*" + level + "){0,\(FindQuery.maximumRelationsDepth)}"
        let item = "[ \\t]*(?:" + path + "[ \\t]*)?"
        return APISchema.string.length(0, textLength).matching("^" + item + "(?:," + item + ")*$")
    }()

    /// A where-language condition named `name` (`where`, `whereClause`, `having`…).
    package static func clause(_ name: String, _ description: String, required: Bool = false) -> Parameter {
        Parameter(name, text, description, required: required)
    }

    // MARK: Parameter sets

    /// `where`: the condition objects match.
    package static let condition = Parameter(
        "where", text.examples(.text("\(DocumentExamples.column) = 'example'")),
        "A condition in the where language, such as age > 30 AND name LIKE 'A%'; empty matches every object")

    /// A column list's example: the seeded tables' column (``DocumentExamples``).
    private static let columns = text.examples(.text(DocumentExamples.column))

    /// The parameters choosing which members each object carries.
    package static let selection: [Parameter] = [
        Parameter(
            "props", columns,
            "Columns, aliases (a as b) and functions to select, comma-separated; * adds every column"),
        Parameter("property", columns, "One more item of props; may repeat"),
        Parameter("excludeProps", columns, "Columns to leave out, comma-separated; names no column has are ignored"),
    ]

    /// The parameters loading related objects with each object.
    package static let relations: [Parameter] = [
        Parameter(
            "loadRelations", relationPaths.examples(.text(DocumentExamples.relation)),
            "Relation paths (a.b.c; * for all) to load, comma-separated"),
        Parameter(
            "relationsDepth", APISchema.integer.within(0...FindQuery.maximumRelationsDepth), "Relation levels to load"),
        Parameter(
            "relationsPageSize", APISchema.integer.within(1...FindQuery.maximumPageSize),
            "Children per 1:N relation (default 10)"),
    ]

    /// The parameters grouping rows or dropping duplicates.
    package static let grouping: [Parameter] = [
        Parameter("groupBy", text, "Expressions to group by, comma-separated"),
        clause("having", "A condition on the groups"),
        Parameter("distinct", .string, "true (in any case) drops duplicate rows; any other value keeps them"),
    ]

    /// The parameters ordering and paging the objects.
    package static let paging: [Parameter] = [
        Parameter(
            "sortBy", text.examples(.text("\(DocumentExamples.column) DESC")),
            "Sort items (name, name DESC, an expression), comma-separated"),
        Parameter("pageSize", APISchema.integer.within(1...FindQuery.maximumPageSize), "Objects per page (default 10)"),
        Parameter("offset", APISchema.integer.within(0...Int(Int32.max)), "Objects to skip (default 0)"),
    ]

    /// Everything a find reads.
    package static let find: [Parameter] = [condition] + selection + grouping + paging + relations

    /// Everything a count reads (the selection matters with `distinct`).
    package static let count: [Parameter] = [condition] + selection + grouping

    /// Everything reading one object reads.
    package static let object: [Parameter] = selection + relations

    /// Everything reading the first or last object reads.
    package static let edge: [Parameter] = [condition] + selection + relations

    /// A POST body carrying `parameters` as members: numbers as numbers, `distinct` as a
    /// boolean or text, the rest as texts or arrays of texts (each item of a list as the query
    /// string's text would be).
    package static func body(_ parameters: [Parameter]) -> APISchema {
        var members: [String: APISchema] = [:]
        for parameter in parameters {
            let schema: APISchema =
                if parameter.schema.type?.names == ["integer"] {
                    parameter.schema
                } else if parameter.name == "distinct" {
                    .either(.boolean, .string)
                } else {
                    .either(parameter.schema, .array(parameter.schema))
                }
            members[parameter.name] = parameter.description.map(schema.described) ?? schema
        }
        return .object(members)
    }
}
