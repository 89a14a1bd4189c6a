//! A small log-log line chart written as a PNG: the benchmark's speedup plot.
//! Self-contained (a 5x7 bitmap font defined here, lines by Bresenham) so the
//! benchmark binary draws it on the GPU machine, which has nothing else.

use std::path::Path;

pub struct Series {
    pub label: String,
    /// (x, y) points, both positive (log axes).
    pub points: Vec<(f64, f64)>,
}

const W: usize = 900;
const H: usize = 560;
const LEFT: usize = 80;
const RIGHT: usize = 200;
const TOP: usize = 70;
const BOTTOM: usize = 60;

const COLORS: [[u8; 3]; 8] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [23, 190, 207],
];

/// 5x7 glyphs: seven rows, the low five bits of each, leftmost pixel highest.
fn glyph(c: char) -> [u8; 7] {
    match c.to_ascii_uppercase() {
        '0' => [14, 17, 19, 21, 25, 17, 14],
        '1' => [4, 12, 4, 4, 4, 4, 14],
        '2' => [14, 17, 1, 2, 4, 8, 31],
        '3' => [31, 2, 4, 2, 1, 17, 14],
        '4' => [2, 6, 10, 18, 31, 2, 2],
        '5' => [31, 16, 30, 1, 1, 17, 14],
        '6' => [6, 8, 16, 30, 17, 17, 14],
        '7' => [31, 1, 2, 4, 8, 8, 8],
        '8' => [14, 17, 17, 14, 17, 17, 14],
        '9' => [14, 17, 17, 15, 1, 2, 12],
        'A' => [14, 17, 17, 31, 17, 17, 17],
        'B' => [30, 17, 17, 30, 17, 17, 30],
        'C' => [14, 17, 16, 16, 16, 17, 14],
        'D' => [28, 18, 17, 17, 17, 18, 28],
        'E' => [31, 16, 16, 30, 16, 16, 31],
        'F' => [31, 16, 16, 30, 16, 16, 16],
        'G' => [14, 17, 16, 23, 17, 17, 15],
        'H' => [17, 17, 17, 31, 17, 17, 17],
        'I' => [14, 4, 4, 4, 4, 4, 14],
        'J' => [7, 2, 2, 2, 2, 18, 12],
        'K' => [17, 18, 20, 24, 20, 18, 17],
        'L' => [16, 16, 16, 16, 16, 16, 31],
        'M' => [17, 27, 21, 21, 17, 17, 17],
        'N' => [17, 17, 25, 21, 19, 17, 17],
        'O' => [14, 17, 17, 17, 17, 17, 14],
        'P' => [30, 17, 17, 30, 16, 16, 16],
        'Q' => [14, 17, 17, 17, 21, 18, 13],
        'R' => [30, 17, 17, 30, 20, 18, 17],
        'S' => [15, 16, 16, 14, 1, 1, 30],
        'T' => [31, 4, 4, 4, 4, 4, 4],
        'U' => [17, 17, 17, 17, 17, 17, 14],
        'V' => [17, 17, 17, 17, 17, 10, 4],
        'W' => [17, 17, 17, 21, 21, 21, 10],
        'X' => [17, 17, 10, 4, 10, 17, 17],
        'Y' => [17, 17, 10, 4, 4, 4, 4],
        'Z' => [31, 1, 2, 4, 8, 16, 31],
        '.' => [0, 0, 0, 0, 0, 12, 12],
        ',' => [0, 0, 0, 0, 12, 4, 8],
        '-' => [0, 0, 0, 31, 0, 0, 0],
        '+' => [0, 4, 4, 31, 4, 4, 0],
        '/' => [1, 1, 2, 4, 8, 16, 16],
        '^' => [4, 10, 17, 0, 0, 0, 0],
        ':' => [0, 12, 12, 0, 12, 12, 0],
        '(' => [2, 4, 8, 8, 8, 4, 2],
        ')' => [8, 4, 2, 2, 2, 4, 8],
        '=' => [0, 0, 31, 0, 31, 0, 0],
        '_' => [0, 0, 0, 0, 0, 0, 31],
        _ => [0; 7],
    }
}

struct Canvas {
    px: Vec<u8>,
}

impl Canvas {
    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < W && (y as usize) < H {
            let i = 3 * (y as usize * W + x as usize);
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: [u8; 3], thick: i64) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            for t in 0..thick {
                for u in 0..thick {
                    self.set(x + t - thick / 2, y + u - thick / 2, c);
                }
            }
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text at (x, y), top left, scale 2 (10x14 pixels a glyph, 12 wide with spacing).
    fn text(&mut self, x: i64, y: i64, s: &str, c: [u8; 3]) {
        for (k, ch) in s.chars().enumerate() {
            for (row, bits) in glyph(ch).iter().enumerate() {
                for col in 0..5 {
                    if bits >> (4 - col) & 1 == 1 {
                        for (u, v) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                            self.set(x + 12 * k as i64 + 2 * col + u, y + 2 * row as i64 + v, c);
                        }
                    }
                }
            }
        }
    }
}

fn text_width(s: &str) -> i64 {
    12 * s.chars().count() as i64
}

/// Decades covering [lo, hi].
fn decades(lo: f64, hi: f64) -> (i32, i32) {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (a, if b > a { b } else { a + 1 })
}

fn power_label(e: i32) -> String {
    match e {
        0 => "1".into(),
        1 => "10".into(),
        _ => format!("10^{e}"),
    }
}

/// Draw `series` on log-log axes with a reference line at y = 1, into `path`.
pub fn write_png(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[Series]) -> std::io::Result<()> {
    let mut cv = Canvas { px: vec![255; 3 * W * H] };
    let pts = series.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| *x > 0.0 && *y > 0.0);
    let (mut xmin, mut xmax, mut ymin, mut ymax) = (f64::MAX, f64::MIN, 1.0f64, 1.0f64);
    for &(x, y) in pts {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymin = ymin.min(y);
        ymax = ymax.max(y);
    }
    if xmin > xmax {
        (xmin, xmax) = (1.0, 10.0);
    }
    let (xa, xb) = decades(xmin, xmax);
    let (ya, yb) = decades(ymin, ymax);
    let (pw, ph) = ((W - LEFT - RIGHT) as f64, (H - TOP - BOTTOM) as f64);
    let to_px = |x: f64, y: f64| -> (i64, i64) {
        let fx = (x.log10() - xa as f64) / (xb - xa) as f64;
        let fy = (y.log10() - ya as f64) / (yb - ya) as f64;
        ((LEFT as f64 + fx * pw).round() as i64, ((TOP as f64 + ph) - fy * ph).round() as i64)
    };
    let grey = [215, 215, 215];
    let black = [0, 0, 0];
    for e in xa..=xb {
        let (x, _) = to_px(10f64.powi(e), 1.0);
        cv.line((x, TOP as i64), (x, (H - BOTTOM) as i64), grey, 1);
        let l = power_label(e);
        cv.text(x - text_width(&l) / 2, (H - BOTTOM) as i64 + 8, &l, black);
    }
    for e in ya..=yb {
        let (_, y) = to_px(1.0, 10f64.powi(e));
        cv.line((LEFT as i64, y), ((W - RIGHT) as i64, y), grey, 1);
        let l = power_label(e);
        cv.text(LEFT as i64 - 8 - text_width(&l), y - 7, &l, black);
    }
    // y = 1: GMP's speed.
    let (_, y1) = to_px(1.0, 1.0);
    cv.line((LEFT as i64, y1), ((W - RIGHT) as i64, y1), [90, 90, 90], 2);
    cv.text((W - RIGHT) as i64 - text_width("GMP") - 4, y1 - 18, "GMP", [90, 90, 90]);
    // Frame.
    let (l, r, t, b) = (LEFT as i64, (W - RIGHT) as i64, TOP as i64, (H - BOTTOM) as i64);
    for (p, q) in [((l, t), (r, t)), ((r, t), (r, b)), ((r, b), (l, b)), ((l, b), (l, t))] {
        cv.line(p, q, black, 1);
    }
    for (k, s) in series.iter().enumerate() {
        let c = COLORS[k % COLORS.len()];
        let mut prev: Option<(i64, i64)> = None;
        for &(x, y) in s.points.iter().filter(|(x, y)| *x > 0.0 && *y > 0.0) {
            let p = to_px(x, y);
            if let Some(q) = prev {
                cv.line(q, p, c, 3);
            }
            for (u, v) in [(-3, -3), (-3, 3)] {
                cv.line((p.0 + u, p.1 + v), (p.0 - u, p.1 - v), c, 2);
            }
            prev = Some(p);
        }
        let ly = TOP as i64 + 10 + 24 * k as i64;
        cv.line(((W - RIGHT) as i64 + 12, ly + 7), ((W - RIGHT) as i64 + 36, ly + 7), c, 3);
        cv.text((W - RIGHT) as i64 + 44, ly, &s.label, black);
    }
    cv.text(l, 10, title, black);
    cv.text((l + r) / 2 - text_width(x_label) / 2, (H - 24) as i64, x_label, black);
    cv.text(6, t - 26, y_label, black);

    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, W as u32, H as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Best);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(&cv.px).map_err(std::io::Error::other)?;
    Ok(())
}
