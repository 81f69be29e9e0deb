import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// The geo API (contract §5): points, categories and searches.
struct GeoRoutes: Sendable {
    let store: GeoStore
    /// Data objects in metadata.
    let objects: GeoDataObjects
    /// Category permissions.
    let access: GeoAccess

    /// Geo bodies are single points: 1 MiB is far more than one needs.
    static let options = RouteOptions(bodyLimit: 1 << 20, transfer: .buffered)

    func add(to routes: inout PublicRoutes) {
        routes.publish(GeoSchemas.all)
        addPoints(to: &routes)
        addSearches(to: &routes)
        addCategories(to: &routes)
        Self.permissionRoutes(store: store, rules: access.rules).add(to: &routes)
        GeoFenceRoutes(store: store).add(to: &routes)
    }

    private func addPoints(to routes: inout PublicRoutes) {
        routes.add(.post, "geo/points", options: Self.options, doc: .savePoint) { call in
            var (change, id) = try GeoPointBody.change(try call.geoJSON, mode: .whole)
            if let id { return try await saved(call, try await update(call, id: id, change)) }
            let categories = change.categories ?? [GeoCategoryName.standard]
            try await access.requireChange(
                added: categories, removed: [], ownerID: call.identity.userId, identity: call.identity)
            change.metadata = try await storingObjects(call, change.metadata)
            return try await saved(
                call, try await store.insert(app: call.identity.appId, change, owner: call.identity.userId))
        }
        for (method, mode, doc) in [
            (HTTPRequest.Method.put, GeoPointBody.Mode.whole, RouteDoc.replacePoint),
            (.patch, .partial, RouteDoc.updatePoint),
        ] {
            routes.add(method, "geo/points/:id", options: Self.options, doc: doc) { call in
                let (change, _) = try GeoPointBody.change(try call.geoJSON, mode: mode)
                return try await saved(call, try await update(call, id: call.parameter("id"), change))
            }
        }
        routes.add(.delete, "geo/points/:id", options: Self.options, doc: .deletePoint) { call in
            let point = try await pointAccess(call)
            try await access.requireFind(point, identity: call.identity)
            try await access.requireChange(
                added: [], removed: point.categories, ownerID: point.ownerID, identity: call.identity)
            guard try await store.delete(app: call.identity.appId, id: point.id, checked: point.categories) else {
                throw try await changedOrMissing(call, id: point.id)
            }
            return .json(.object(JSONObject([("result", .bool(true))])))
        }
        routes.add(.get, "geo/points/:id", options: Self.options, doc: .point) { call in
            .json(try await loaded(call, try await point(call)).json)
        }
        routes.add(.get, "geo/points/:id/metadata", options: Self.options, doc: .pointMetadata) { call in
            if let cluster = GeoClusterID(call.parameter("id")) {
                return .json(.object(try await clusterMetadata(call, cluster)))
            }
            return .json(.object(try await loaded(call, try await point(call)).metadata ?? JSONObject()))
        }
    }

    /// Updates a point the caller may find and change: ADD on every category it will be in
    /// (changing a point in place writes to its categories), REMOVE on those it leaves. The write
    /// happens only if the categories checked are still the point's (4010 otherwise).
    private func update(_ call: PublicCall, id: String, _ change: GeoStore.Change) async throws -> GeoPoint {
        let current = try await pointAccess(call, id: id)
        try await access.requireFind(current, identity: call.identity)
        let categories = change.categories ?? current.categories
        try await access.requireChange(
            added: categories, removed: current.categories.filter { !categories.contains($0) },
            ownerID: current.ownerID,
            identity: call.identity)
        var change = change
        change.metadata = try await storingObjects(call, change.metadata)
        do {
            return try await store.update(app: call.identity.appId, id: id, change, checked: current.categories)
        } catch let error as ErrorEnvelope where error.code == GeoError.pointNotFound(id).code {
            throw try await changedOrMissing(call, id: id)
        }
    }

    /// Why a guarded write matched nothing: 4010 when the point is still there (its categories
    /// changed since they were checked), else 4008.
    private func changedOrMissing(_ call: PublicCall, id: String) async throws -> ErrorEnvelope {
        try await store.access(app: call.identity.appId, id: id) == nil
            ? GeoError.pointNotFound(id) : GeoError.changedMeanwhile(id)
    }

    /// The metadata with its data objects saved and referenced.
    private func storingObjects(_ call: PublicCall, _ metadata: JSONObject?) async throws -> JSONObject? {
        guard let metadata else { return nil }
        return try await objects.store(metadata, identity: call.identity, logger: call.context.logger)
    }

    /// The point with the data objects of its metadata loaded for the caller.
    private func loaded(_ call: PublicCall, _ point: GeoPoint) async throws -> GeoPoint {
        try await objects.load([point], identity: call.identity, logger: call.context.logger).first ?? point
    }

    /// `{"geopoint": …}`, the answer to a save.
    private func saved(_ call: PublicCall, _ point: GeoPoint) async throws -> Response {
        .json(.object(JSONObject([("geopoint", try await loaded(call, point).json)])))
    }

    /// The categories and owner of the point `id` (the `:id` parameter by default), 4008 when missing.
    private func pointAccess(_ call: PublicCall, id: String? = nil) async throws -> GeoStore.PointAccess {
        let id = id ?? call.parameter("id")
        guard let point = try await store.access(app: call.identity.appId, id: id) else {
            throw GeoError.pointNotFound(id)
        }
        return point
    }

    private func point(_ call: PublicCall) async throws -> GeoPoint {
        try await access.requireFind(try await pointAccess(call), identity: call.identity)
        guard let point = try await store.point(app: call.identity.appId, id: call.parameter("id")) else {
            throw GeoError.pointNotFound(call.parameter("id"))
        }
        return point
    }

    /// A cluster's merged metadata: its cell searched again with the query the client sends.
    private func clusterMetadata(_ call: PublicCall, _ cluster: GeoClusterID) async throws -> JSONObject {
        var search = try await findable(call, rectangle: call.uri.queryParameters["nwlat"] != nil)
        search.cell = cluster
        search.clusterCell = cluster.size
        search.includeMetadata = true
        search.offset = 0
        guard case .cluster(let merged)? = try await found(call, search).first else {
            throw GeoError.clusterNotFound(cluster.description)
        }
        return merged.metadata ?? JSONObject()
    }

    private func addSearches(to routes: inout PublicRoutes) {
        for (path, rectangle) in [("geo/points", false), ("geo/rect", true)] {
            routes.add(.get, path, options: Self.options, doc: rectangle ? .findInRectangle : .findPoints) { call in
                try await find(call, try await findable(call, rectangle: rectangle))
            }
            routes.add(
                .get, "geo/relative/" + (rectangle ? "rect" : "points"), options: Self.options,
                doc: rectangle ? .relativeFindInRectangle : .relativeFindPoints
            ) { call in
                try await relativeFind(call, try await findable(call, rectangle: rectangle))
            }
        }
        routes.add(.get, "geo/count", options: Self.options, doc: .countPoints) { call in
            let search = try await findable(call, rectangle: call.uri.queryParameters["nwlat"] != nil)
            return .json(.integer(Int64(try await store.count(app: call.identity.appId, search))))
        }
        routes.add(.get, "geo/clusters/:id/points", options: Self.options, doc: .clusterPoints) { call in
            guard let cluster = GeoClusterID(call.parameter("id")) else {
                throw GeoError.clusterNotFound(call.parameter("id"))
            }
            var search = try await findable(call, rectangle: call.uri.queryParameters["nwlat"] != nil)
            search.cell = cluster
            search.clusterCell = nil
            return .json(.array(try await found(call, search).map(\.json)))
        }
    }

    /// The request's search, narrowed to the categories the caller may find in.
    private func findable(_ call: PublicCall, rectangle: Bool) async throws -> GeoSearch {
        try await access.findable(try call.geoSearch(rectangle: rectangle), identity: call.identity)
    }

    private func find(_ call: PublicCall, _ search: GeoSearch) async throws -> Response {
        if let relative = search.relative { return try await relativeFind(call, search, relative) }
        return .json(.array(try await found(call, search).map(\.json)))
    }

    /// A search's items, the data objects of their metadata loaded for the caller.
    private func found(_ call: PublicCall, _ search: GeoSearch) async throws -> [GeoItem] {
        try await objects.load(
            try await store.find(app: call.identity.appId, search), identity: call.identity, logger: call.context.logger
        )
    }

    private func relativeFind(_ call: PublicCall, _ search: GeoSearch) async throws -> Response {
        guard let relative = search.relative else {
            throw GeoError.invalidParameter(
                "A relative find needs relativeFindMetadata and relativeFindPercentThreshold")
        }
        return try await relativeFind(call, search, relative)
    }

    private func relativeFind(_ call: PublicCall, _ search: GeoSearch, _ relative: RelativeFind) async throws
        -> Response
    {
        let matches = try await store.relativeFind(app: call.identity.appId, search, relative)
        let points = try await objects.load(matches.map(\.0), identity: call.identity, logger: call.context.logger)
        return .json(
            .array(
                zip(points, matches.map(\.1)).map { point, matches in
                    .object(JSONObject([("geoPoint", point.json), ("matches", .number(matches))]))
                }))
    }

    private func addCategories(to routes: inout PublicRoutes) {
        routes.add(.get, "geo/categories", options: Self.options, doc: .geoCategories) { call in
            .json(.array(try await store.categories(app: call.identity.appId).map(\.json)))
        }
        routes.add(.put, "geo/categories/:name", options: Self.options, doc: .createGeoCategory) { call in
            let name = try Self.categoryName(call)
            try await access.requireChange(added: [name], removed: [], ownerID: nil, identity: call.identity)
            return .json(try await store.createCategory(app: call.identity.appId, name: name).json)
        }
        routes.add(.delete, "geo/categories/:name", options: Self.options, doc: .deleteGeoCategory) { call in
            let name = try Self.categoryName(call)
            try await access.requireChange(added: [], removed: [name], ownerID: nil, identity: call.identity)
            guard try await store.deleteCategory(app: call.identity.appId, name: name) else {
                throw GeoError.categoryNotFound(name)
            }
            return .json(.object(JSONObject([("result", .bool(true))])))
        }
    }

    /// The `:name` a category route names; Default is refused (4006).
    private static func categoryName(_ call: PublicCall) throws(ErrorEnvelope) -> String {
        let name = try GeoCategoryName.normalized(call.parameter("name"))
        guard name != GeoCategoryName.standard else { throw GeoError.defaultCategory }
        return name
    }
}
