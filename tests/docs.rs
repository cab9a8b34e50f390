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

/// The README's Rust example, compiled and run here: the README's ```rust block must be the
/// lines between the markers below, word for word (without their indentation), so that an
/// API change that breaks it fails here.
#[test]
#[rustfmt::skip] // the example's lines as the README shows them
fn the_readme_rust_example_compiles_and_runs() -> Result<(), Box<dyn std::error::Error>> {
    // README example begins
    use lavender::engine::{BodyDesc, JointDesc, Settings, Vec3, World};

    let mut world = World::new(Settings::default())?;
    let ground = world.add_body(BodyDesc::fixed("ground"))?; // a static body (`kind = "static"` in a scene)
    let arm = world.add_body(BodyDesc::dynamic("arm").position(Vec3::new(0.0, -1.0, 0.0)))?;
    world.add_joint(JointDesc::revolute("hinge", ground, arm).anchors(Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0)))?;
    world.set_body_pose(arm, Vec3::new(0.02, -0.97, 0.0), lavender::engine::Quat::IDENTITY)?; // no time passes
    assert!((world.constraint_data()[0][3] - 0.0360555).abs() < 1e-6); // sqrt(0.02^2 + 0.03^2)
    world.step(1.0 / 60.0)?;                                              // four 1/240 s substeps
    for warning in world.warnings(1.0 / 60.0) { eprintln!("warning: {warning}"); } // none here
    // README example ends

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md"))?;
    let start = readme.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let block = &readme[start..start + readme[start..].find("```").unwrap()];
    let source = include_str!("docs.rs");
    let (begin, end) = ("// README example begins\n", "    // README example ends");
    let body = &source[source.find(begin).unwrap() + begin.len()..source.find(end).unwrap()];
    let body: String = body.lines().map(|l| format!("{}\n", l.trim_start_matches("    "))).collect();
    assert_eq!(
        block, body,
        "README.md's Rust example differs from tests/docs.rs's copy: edit both"
    );
    Ok(())
}

/// Every relative link of the README and of the documents it links to names a file that
/// exists, and every `#anchor` into a Markdown file names one of its headings (GitHub's
/// slugs: lower case, spaces to `-`, punctuation other than `-` and `_` dropped).
#[test]
fn documentation_links_lead_somewhere() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let slug = |heading: &str| -> String {
        heading
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect()
    };
    let anchors = |file: &std::path::Path| -> Vec<String> {
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('#') && l.contains("# "))
            .map(|l| slug(l.trim_start_matches('#')))
            .collect()
    };
    let mut broken = Vec::new();
    for doc in ["README.md", "engine/DESIGN.md", "benches/PERFORMANCE.md"] {
        let path = root.join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        let dir = path.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.starts_with("http") || target.contains(' ') {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                path.clone()
            } else {
                dir.join(file)
            };
            if !file.exists() {
                broken.push(format!("{doc}: {target} (no such file)"));
            } else if !anchor.is_empty() && !anchors(&file).iter().any(|a| a == anchor) {
                broken.push(format!("{doc}: {target} (no such heading)"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links:\n  {}",
        broken.join("\n  ")
    );
}
