//! The README's sections that live next to their code (`*/README-section.md`) are copies:
//! each must appear in README.md word for word, so that editing one without the other fails.

#[test]
fn readme_sections_match_their_source_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for section in [
        "tools/python/README-section.md",
        "tools/tutorial/README-section.md",
        "replay/README-section.md",
        "benches/README-section.md",
    ] {
        let text = std::fs::read_to_string(root.join(section)).unwrap();
        assert!(
            readme.contains(text.trim_end()),
            "{section} differs from its copy in README.md: edit both (or copy the README's \
             section into the file)"
        );
    }
}

/// The README's scene-format example is a scene that loads and builds as written.
#[test]
fn the_readme_scene_example_builds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = &readme[readme.find("## Scene format").expect("the section")..];
    let start = section.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let block = &section[start..start + section[start..].find("```").unwrap()];
    let scene = lavender::engine::Scene::from_toml_str(block, "README.md's scene example")
        .unwrap_or_else(|e| panic!("{e}"));
    let world = scene.build().unwrap_or_else(|e| panic!("{e}"));
    // ground and bob, the chain's anchor and 100 links, the 20 x 20 grid.
    assert_eq!(world.body_count(), 2 + 101 + 400);
}
