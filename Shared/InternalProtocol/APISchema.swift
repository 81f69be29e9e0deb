/// A JSON Schema (the subset OpenAPI 3.1 descriptions of this API need), written beside a
/// route to describe its bodies and carried in the ``RouteManifest`` to the gateway, which
/// publishes it in `openapi.json`. Encodes as the JSON Schema object itself.
package struct APISchema: Codable, Sendable, Hashable {
    /// `$ref`: a schema of the document's `components/schemas`.
    package var ref: String?
    /// `type`: one JSON type, or several (`["string", "null"]`).
    package var type: TypeSet?
    package var format: String?
    package var description: String?
    package var properties: [String: APISchema]?
    package var required: [String]?
    /// `additionalProperties`: false forbids members beyond `properties`; a schema types them.
    package var additionalProperties: Member?
    /// `propertyNames`: the schema every member's name matches.
    package var propertyNames: Member?
    /// `minProperties`, `maxProperties`: how many members an object has.
    package var minProperties: Int?
    package var maxProperties: Int?
    /// `items`: the schema of every element of an array.
    package var items: Member?
    /// `minItems`, `maxItems`: how many elements an array has.
    package var minItems: Int?
    package var maxItems: Int?
    /// `anyOf`: the value matches at least one of these.
    package var anyOf: [APISchema]?
    /// `allOf`: the value matches every one of these.
    package var allOf: [APISchema]?
    /// `enum`: the strings allowed.
    package var allowed: [String]?
    package var minimum: Double?
    package var maximum: Double?
    package var minLength: Int?
    package var maxLength: Int?
    package var pattern: String?
    /// `examples`: values that exist in the system the tests seed (``DocumentExamples``), where
    /// fuzzers and readers start.
    package var examples: [Example]?

    enum CodingKeys: String, CodingKey {
        case ref = "$ref"
        case allowed = "enum"
        case type, format, description, properties, required, additionalProperties, items, anyOf, allOf
        case propertyNames, minProperties, maxProperties, minItems, maxItems
        case minimum, maximum, minLength, maxLength, pattern, examples
    }

    /// One example value: any JSON value but `null`.
    package indirect enum Example: Codable, Sendable, Hashable, ExpressibleByStringLiteral {
        case text(String)
        case integer(Int)
        case number(Double)
        case boolean(Bool)
        case list([Example])
        case members([String: Example])

        package init(stringLiteral value: String) { self = .text(value) }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .boolean(flag)
            } else if let number = try? container.decode(Int.self) {
                self = .integer(number)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let text = try? container.decode(String.self) {
                self = .text(text)
            } else if let list = try? container.decode([Example].self) {
                self = .list(list)
            } else {
                self = .members(try container.decode([String: Example].self))
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .integer(let number): try container.encode(number)
            case .number(let number): try container.encode(number)
            case .boolean(let flag): try container.encode(flag)
            case .list(let list): try container.encode(list)
            case .members(let members): try container.encode(members)
            }
        }
    }

    /// A schema nested in another by one member (`items`, `additionalProperties`), boxed so the
    /// struct can hold itself.
    package indirect enum Member: Codable, Sendable, Hashable {
        case schema(APISchema)
        case allowed(Bool)

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .allowed(flag)
            } else {
                self = .schema(try container.decode(APISchema.self))
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .schema(let schema): try container.encode(schema)
            case .allowed(let flag): try container.encode(flag)
            }
        }
    }

    /// One JSON type name or a list of them.
    package struct TypeSet: Codable, Sendable, Hashable {
        package var names: [String]

        package init(_ names: [String]) { self.names = names }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let name = try? container.decode(String.self) {
                names = [name]
            } else {
                names = try container.decode([String].self)
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if names.count == 1 { try container.encode(names[0]) } else { try container.encode(names) }
        }
    }

    /// A schema of the given JSON types.
    package init(types: [String] = [], format: String? = nil, description: String? = nil) {
        self.type = types.isEmpty ? nil : TypeSet(types)
        self.format = format
        self.description = description
    }
}

extension APISchema {
    /// Any JSON value.
    package static let any = APISchema()
    package static let string = APISchema(types: ["string"])
    package static let integer = APISchema(types: ["integer"])
    package static let number = APISchema(types: ["number"])
    package static let boolean = APISchema(types: ["boolean"])
    /// Any JSON object.
    package static let anyObject = APISchema(types: ["object"])
    /// A binary body (a file's bytes).
    package static let binary = APISchema(types: ["string"], format: "binary")

    /// The schema `name` of the document's components.
    package static func ref(_ name: String) -> APISchema {
        var schema = APISchema()
        schema.ref = "#/components/schemas/" + name
        return schema
    }

    /// An array of `element`.
    package static func array(_ element: APISchema) -> APISchema {
        var schema = APISchema(types: ["array"])
        schema.items = .schema(element)
        return schema
    }

    /// An object with these members, of which `required` must be present; others are allowed
    /// unless `closed`.
    package static func object(_ properties: [String: APISchema], required: [String] = [], closed: Bool = false)
        -> APISchema
    {
        var schema = APISchema(types: ["object"])
        schema.properties = properties
        schema.required = required.isEmpty ? nil : required
        schema.additionalProperties = closed ? .allowed(false) : nil
        return schema
    }

    /// An object whose every member is `value` (a map).
    package static func map(_ value: APISchema) -> APISchema {
        var schema = APISchema(types: ["object"])
        schema.additionalProperties = .schema(value)
        return schema
    }

    /// One of these strings.
    package static func choice(_ values: [String]) -> APISchema {
        var schema = APISchema.string
        schema.allowed = values
        return schema
    }

    /// Any of these schemas.
    package static func either(_ schemas: APISchema...) -> APISchema {
        var schema = APISchema()
        schema.anyOf = schemas
        return schema
    }

    /// This schema, or `null`.
    package var orNull: APISchema {
        if let type, ref == nil, anyOf == nil {
            var schema = self
            schema.type = TypeSet(type.names + ["null"])
            return schema
        }
        return .either(self, APISchema(types: ["null"]))
    }

    /// This numeric schema limited to `minimum...maximum` (or from `minimum` up).
    package func within(_ minimum: Double, _ maximum: Double? = nil) -> APISchema {
        var schema = self
        schema.minimum = minimum
        schema.maximum = maximum
        return schema
    }

    /// This numeric schema limited to `range`.
    package func within(_ range: ClosedRange<Int>) -> APISchema {
        within(Double(range.lowerBound), Double(range.upperBound))
    }

    /// This schema with example values.
    package func examples(_ values: Example...) -> APISchema {
        var schema = self
        schema.examples = values
        return schema
    }

    /// This object schema with `minimum` to `maximum` members (no upper bound when nil), each
    /// named as `names` allows (any name when nil).
    package func members(_ minimum: Int, _ maximum: Int? = nil, named names: APISchema? = nil) -> APISchema {
        var schema = self
        schema.minProperties = minimum > 0 ? minimum : nil
        schema.maxProperties = maximum
        schema.propertyNames = names.map(Member.schema)
        return schema
    }

    /// This array schema with `minimum` to `maximum` elements (no upper bound when nil).
    package func elements(_ minimum: Int, _ maximum: Int? = nil) -> APISchema {
        var schema = self
        schema.minItems = minimum > 0 ? minimum : nil
        schema.maxItems = maximum
        return schema
    }

    /// This schema, matching at least one of `alternatives` as well (JSON Schema's `anyOf`
    /// beside the schema's own keywords: an object that needs one member or another). Called
    /// again, each call's alternatives must hold (`allOf`).
    package func requiringOne(of alternatives: [APISchema]) -> APISchema {
        var schema = self
        if schema.anyOf == nil {
            schema.anyOf = alternatives
        } else {
            var group = APISchema()
            group.anyOf = alternatives
            schema.allOf = (schema.allOf ?? []) + [group]
        }
        return schema
    }

    /// This schema with a description.
    package func described(_ text: String) -> APISchema {
        var schema = self
        schema.description = text
        return schema
    }
}
