//! A PDF made to a number of pages, for the tests of what a PDF costs.

/// A PDF of `pages` US-letter pages, each with a line of text.
pub fn pdf_of(pages: usize) -> Vec<u8> {
    use lopdf::{dictionary, Document, Object, Stream};
    let mut document = Document::with_version("1.5");
    let pages_id = document.new_object_id();
    let kids: Vec<Object> = (0..pages)
        .map(|page| {
            let text = format!("BT /F1 12 Tf 72 712 Td (page {page}) Tj ET");
            let content = document.add_object(Stream::new(dictionary! {}, text.into_bytes()));
            let media_box: Vec<Object> = vec![0.into(), 0.into(), 612.into(), 792.into()];
            let page = dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content, "MediaBox" => media_box,
            };
            document.add_object(page).into()
        })
        .collect();
    let tree = dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => pages as i64 };
    document.objects.insert(pages_id, Object::Dictionary(tree));
    let catalog = document.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    document.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    document.save_to(&mut bytes).unwrap();
    bytes
}
