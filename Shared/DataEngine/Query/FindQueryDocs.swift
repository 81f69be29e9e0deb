import InternalProtocol

/// The query parameters of the data query language, as `openapi.json` describes them: every
/// route that finds, counts or reads objects (data, users, relations) lists these.
package enum FindQueryDocs {
    package typealias Parameter = RouteDoc.QueryParameter

    /// `where`: the condition objects match.
    package static let condition = Parameter("where", .string, "A condition, such as age > 30 AND name LIKE 'A%'")

    /// The parameters choosing which members each object carries.
    package static let selection: [Parameter] = [
        Parameter("props", .string, "Columns, aliases (a as b) and functions to select, comma-separated"),
        Parameter("property", .string, "One more item of props; may repeat"),
        Parameter("excludeProps", .string, "Columns to leave out, comma-separated"),
    ]

    /// The parameters loading related objects with each object.
    package static let relations: [Parameter] = [
        Parameter("loadRelations", .string, "Relation paths (a.b.c; * for all) to load, comma-separated"),
        Parameter(
            "relationsDepth", APISchema.integer.within(0...FindQuery.maximumRelationsDepth), "Relation levels to load"),
        Parameter(
            "relationsPageSize", APISchema.integer.within(1...FindQuery.maximumPageSize),
            "Children per 1:N relation (default 10)"),
    ]

    /// The parameters grouping rows or dropping duplicates.
    package static let grouping: [Parameter] = [
        Parameter("groupBy", .string, "Expressions to group by, comma-separated"),
        Parameter("having", .string, "A condition on the groups"),
        Parameter("distinct", .string, "true to drop duplicate rows"),
    ]

    /// The parameters ordering and paging the objects.
    package static let paging: [Parameter] = [
        Parameter("sortBy", .string, "Sort items (name, name DESC), comma-separated"),
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

    /// A POST body carrying `parameters` as members: texts or lists of them, numbers as numbers.
    package static func body(_ parameters: [Parameter]) -> APISchema {
        var members: [String: APISchema] = [:]
        for parameter in parameters {
            let schema: APISchema =
                if parameter.schema.type?.names == ["integer"] {
                    parameter.schema
                } else if parameter.name == "distinct" {
                    .either(.boolean, .string)
                } else {
                    .either(.string, .array(.string))
                }
            members[parameter.name] = parameter.description.map(schema.described) ?? schema
        }
        return .object(members)
    }
}
