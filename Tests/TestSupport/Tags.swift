import Testing

extension Tag {
    /// The fast tier (`Deploy/test.sh --fast`): no database, no peer, no process — parsers,
    /// frames, routes, the permission model; seconds after the build.
    @Tag package static var fast: Self
}
