//! How the media of a result fit its limit: as they came, scaled down, or giving way whole. One
//! rule for a list of blocks and for a Gemini function response's parts.
//!
//! - The room is the limit less what a little text and the note take (twice the least limit);
//!   a note longer than that takes the rest from the media's room.
//! - The media stay as they came when all of them fit. Else the images are tried scaled down
//!   to long edges of 1568, 1280 and 1024 px ([`scale`](crate::scale)), and the largest at which
//!   every block fits is taken; when none is, the floor, 1024 px. An image already within a
//!   size stays as it came.
//! - At a size, the first image always stays, its room kept first (unless its labels, an MCP
//!   resource's `uri`, are more than the room); the others stay, in order, while they fit, and
//!   from the first that does not, the rest give way. Any other block (a PDF, audio, a blob)
//!   stays only if it fits, in order, around the first image.
//! - An image whose bytes do not decode as its header says is priced as it came, and never
//!   scaled.
//! - The note says what was dropped, in the crate's form:
//!   `truncated: 6120 tokens dropped (3 of 10 images; 7 scaled to 1024 px), refine your query`.
//!
//! Every step is a function of the bytes and the limit alone: the same result gives the same
//! bytes, and a result capped once is within its limit as it stands.

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::blocks::Edit;
use super::media::Priced;
use crate::image::ImageTokens;
use crate::layout::media_note;
use crate::limit::ToolLimit;
use crate::media::MediaKind;
use crate::scale::{fitted, FLOOR_LONG_EDGE, STEPS};
use crate::truncation::Truncation;

/// The media of a list fitted to a limit.
#[derive(Debug, Default)]
pub(super) struct MediaFit {
    /// The edits of the list, by place: a block removed (`None`), or its image scaled down.
    pub(super) edits: Vec<Edit>,
    /// The tokens of all the media as they came, and as they go.
    tokens: usize,
    kept_tokens: usize,
    /// The note that says what was dropped, and its tokens; none when nothing was.
    pub(super) note: Option<String>,
    note_tokens: usize,
}

/// What becomes of one block of media.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// It stays, at these tokens: as it came, or scaled down.
    Stays(usize),
    /// It gives way whole.
    Gone,
}

impl MediaFit {
    /// The media `priced` (each block's place in `blocks` and its price under `rule`, in
    /// order) fitted to `limit`, as this module's doc says; `note_cost` is what the note takes
    /// where it goes.
    pub(super) fn of(
        blocks: &[&RawValue],
        priced: &[(usize, Priced<'_>)],
        rule: ImageTokens,
        limit: &ToolLimit,
        note_cost: &dyn Fn(&str) -> usize,
    ) -> Self {
        let mut fitting = Fitting {
            blocks,
            priced,
            rule,
            scalable: priced
                .iter()
                .map(|(_, priced)| priced.image.as_ref().is_some_and(|image| image.scalable))
                .collect(),
            scaled: Scaled::default(),
        };
        let mut room = limit
            .max_tokens()
            .saturating_sub(2 * ToolLimit::MIN_MAX_TOKENS);
        // A note longer than its reserve takes its room from the media: the fit is made again
        // in less room, until the media, the note and the least text are within the limit.
        loop {
            let fit = fitting.fit(room, limit, note_cost);
            let needs = fit.kept_tokens + fit.note_tokens + ToolLimit::MIN_MAX_TOKENS;
            let over = needs.saturating_sub(limit.max_tokens());
            if over == 0 || room == 0 {
                return fit;
            }
            room = room.saturating_sub(over);
        }
    }

    /// What the media that stay, and the note, leave the text of `limit`: at least the least
    /// limit, when the first image alone takes more.
    pub(super) fn text_limit(&self, limit: &ToolLimit) -> ToolLimit {
        let left = limit
            .max_tokens()
            .saturating_sub(self.kept_tokens + self.note_tokens);
        let left = left.max(ToolLimit::MIN_MAX_TOKENS);
        limit
            .clone()
            .with_max_tokens(left)
            .expect("at least the least limit")
    }

    /// The figures of the whole cut to `limit`, of a text of `text.0` tokens of which `text.1`
    /// were kept, and these media.
    pub(super) fn figures(&self, limit: &ToolLimit, text: (usize, usize)) -> Truncation {
        let original_tokens = text.0 + self.tokens;
        let kept_tokens = text.1 + self.kept_tokens;
        Truncation {
            original_tokens,
            kept_tokens,
            dropped_tokens: original_tokens - kept_tokens,
            max_tokens: limit.max_tokens(),
            keep: limit.keep(),
        }
    }
}

/// One list's media being fitted: what is learned of its images (which do not decode, and
/// each scaled down) is kept from one room to the next.
struct Fitting<'a, 'b> {
    blocks: &'a [&'a RawValue],
    priced: &'a [(usize, Priced<'b>)],
    rule: ImageTokens,
    scalable: Vec<bool>,
    scaled: Scaled,
}

impl Fitting<'_, '_> {
    /// The media fitted to `room`, and the note, its cost by `note_cost`, that says what was
    /// dropped from `limit`.
    fn fit(
        &mut self,
        room: usize,
        limit: &ToolLimit,
        note_cost: &dyn Fn(&str) -> usize,
    ) -> MediaFit {
        let (priced, rule) = (self.priced, self.rule);
        // An image whose bytes do not decode as its header says is found out when it is first
        // scaled: the fit is made again with it priced as it came, until every image that
        // stays at the size chosen is scaled.
        let (edge, fates, mut edits) = loop {
            let edge = largest_edge(priced, rule, room, &self.scalable);
            let fates = fates(priced, rule, edge, room, &self.scalable);
            match self
                .scaled
                .edits(self.blocks, priced, &fates, edge, &self.scalable)
            {
                Ok(edits) => break (edge, fates, edits),
                Err(undecodable) => self.scalable[undecodable] = false,
            }
        };
        let tokens: usize = priced.iter().map(|(_, priced)| priced.media.tokens).sum();
        let kept_tokens: usize = fates
            .iter()
            .map(|fate| match fate {
                Fate::Stays(tokens) => *tokens,
                Fate::Gone => 0,
            })
            .sum();
        let gone = gone_by_kind(priced, &fates);
        let scaled_count = edits.iter().filter(|(_, edit)| edit.is_some()).count();
        let scaled = (scaled_count > 0).then(|| (scaled_count, edge.unwrap_or_default()));
        let note = (!edits.is_empty())
            .then(|| media_note(tokens - kept_tokens, &gone, scaled, limit.hint()));
        edits.sort_by_key(|(place, _)| *place);
        MediaFit {
            edits,
            tokens,
            kept_tokens,
            note_tokens: note.as_deref().map_or(0, note_cost),
            note,
        }
    }
}

/// The images scaled so far, by their place among the media and the long edge they were
/// scaled to: a fit made again does not scale an image twice.
#[derive(Debug, Default)]
struct Scaled(HashMap<(usize, usize), Option<String>>);

impl Scaled {
    /// The edits that carry out `fates` on `blocks` at the long edge `edge`: a block that gives
    /// way removed, a `scalable` image that stays scaled down where it is over the edge. `Err`
    /// with the place among `priced` of an image that stays, to be scaled, whose bytes do not
    /// decode.
    fn edits(
        &mut self,
        blocks: &[&RawValue],
        priced: &[(usize, Priced<'_>)],
        fates: &[Fate],
        edge: Option<usize>,
        scalable: &[bool],
    ) -> Result<Vec<Edit>, usize> {
        let mut edits = Vec::new();
        for (nth, ((place, priced), fate)) in priced.iter().zip(fates).enumerate() {
            if *fate == Fate::Gone {
                edits.push((*place, None));
                continue;
            }
            let (Some(image), Some(edge)) = (&priced.image, edge) else {
                continue;
            };
            if !scalable[nth] || fitted_size(image.size, edge) == image.size {
                continue;
            }
            let scaled = self
                .0
                .entry((nth, edge))
                .or_insert_with(|| image.scaled_in(blocks[*place].get(), edge));
            edits.push((*place, Some(scaled.clone().ok_or(nth)?)));
        }
        Ok(edits)
    }
}

/// The long edge the images of `priced` are scaled to, to fit in `room`: none when all fit as
/// they came, else the largest of [`STEPS`] at which all fit, else the floor.
fn largest_edge(
    priced: &[(usize, Priced<'_>)],
    rule: ImageTokens,
    room: usize,
    scalable: &[bool],
) -> Option<usize> {
    let mut sizes = std::iter::once(None).chain(STEPS.map(Some));
    // Every block stays, and within the room: the first image stays even when it does not fit.
    let all_fit = |edge| {
        let fates = fates(priced, rule, edge, room, scalable);
        let kept = fates.iter().try_fold(0, |kept, fate| match fate {
            Fate::Stays(tokens) => Some(kept + tokens),
            Fate::Gone => None,
        });
        kept.is_some_and(|kept| kept <= room)
    };
    sizes
        .find(|&edge| all_fit(edge))
        .unwrap_or(Some(FLOOR_LONG_EDGE))
}

/// Of each kind of media of which a block gives way: the kind, how many give way, and of how
/// many.
fn gone_by_kind(priced: &[(usize, Priced<'_>)], fates: &[Fate]) -> Vec<(MediaKind, usize, usize)> {
    let by_kind = MediaKind::ALL.into_iter().filter_map(|kind| {
        let of_kind = priced.iter().zip(fates);
        let of_kind = of_kind.filter(|((_, priced), _)| priced.media.kind == kind);
        let (all, gone) = of_kind.fold((0, 0), |(all, gone), (_, fate)| {
            (all + 1, gone + usize::from(*fate == Fate::Gone))
        });
        (gone > 0).then_some((kind, gone, all))
    });
    by_kind.collect()
}

/// The size of an image of `size` scaled to a long edge of `edge`.
fn fitted_size(size: (usize, usize), edge: usize) -> (usize, usize) {
    fitted(size.0, size.1, edge)
}

/// Where the first image is among `priced` whose labels (an MCP resource's `uri`) are within
/// `room`; past the end if there is none. An image's price is bounded by its rule, its labels
/// are not.
fn first_image(priced: &[(usize, Priced<'_>)], room: usize) -> usize {
    let images = priced
        .iter()
        .position(|(_, p)| p.media.kind == MediaKind::Image && p.label_tokens <= room);
    images.unwrap_or(priced.len())
}

/// What becomes of each block of `priced` in `room`, its `scalable` images scaled to a long
/// edge of `edge` (as they came with none), as this module's doc says.
fn fates(
    priced: &[(usize, Priced<'_>)],
    rule: ImageTokens,
    edge: Option<usize>,
    room: usize,
    scalable: &[bool],
) -> Vec<Fate> {
    let first = first_image(priced, room);
    let price = |nth: usize, priced: &Priced<'_>| match (&priced.image, edge) {
        (Some(image), Some(edge)) if scalable[nth] => {
            let (width, height) = fitted_size(image.size, edge);
            match (width, height) == image.size {
                true => priced.media.tokens,
                false => rule.tokens(width, height, image.detail),
            }
        }
        _ => priced.media.tokens,
    };
    // The first image's room is kept first, wherever it is: the blocks before it fit around it.
    let first_tokens = priced.get(first).map_or(0, |(_, p)| price(first, p));
    let (mut kept, mut images_stopped) = (first_tokens, false);
    let fates = priced.iter().enumerate().map(|(nth, (_, priced))| {
        if nth == first {
            return Fate::Stays(first_tokens);
        }
        let tokens = price(nth, priced);
        let fits = kept + tokens <= room;
        let stays = match priced.media.kind {
            MediaKind::Image => {
                let stays = fits && !images_stopped;
                images_stopped |= !stays;
                stays
            }
            _ => fits,
        };
        kept += if stays { tokens } else { 0 };
        if stays {
            Fate::Stays(tokens)
        } else {
            Fate::Gone
        }
    });
    fates.collect()
}
