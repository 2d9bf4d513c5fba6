"""Embedded recapture source: a simulated photograph of a displayed image (paired evaluations §3.3, §5).

The paper's real sources are ImageNet-ES (54 screen recaptures: 2 lighting levels x 27 camera settings)
and ES-Diverse (162 print recaptures). For the embedded digits benchmark this module simulates a screen
recapture that is *not* one of the synthetic ImageNet-C corruptions used for the screening scores:

1. display transfer: the screen decodes the image with the sRGB gamma, compresses the gamut, has a
   black level, and shows each pixel as three RGB subpixel stripes with a dark matrix between pixel rows;
2. lighting: the target's luminance at the lens scales with the lighting level (reflected room light for
   a print; for a screen, read it as the display brightness set for the room), and room light reflected
   off the screen adds a coloured veiling glare that lifts the blacks;
3. optics: a defocus pillbox whose radius falls with the f-number, diffraction that grows with it, and
   camera-shake motion blur whose length grows with the shutter time (random direction per capture);
4. geometry: the camera on its tripod sees the screen with a slight perspective, crops its border and
   the sensor's pixel grid resamples the subpixel grid at a non-commensurate pitch (moiré);
5. exposure and sensor: electrons = photon rate x shutter / f-number^2 with Poisson shot noise, Gaussian
   read noise and full-well clipping; ISO is the analogue gain, then ADC noise and clipping;
6. white balance: a daylight preset under the room light's colour, with a small per-capture AWB error;
7. the camera's sRGB tone curve, 8-bit quantisation and JPEG compression (Pillow).

Conditions mirror ImageNet-ES's `param_control` grid (`settings/grid-options-3x3x3.csv` of the
ImageNet-ES repository): `param_1..27` enumerate ISO {250, 2000, 16000} fastest, then shutter
{1/4, 1/60, 1/1000} s, then aperture {f/5, f/9, f/16}; lighting levels are named as ES's `l1`, `l5`
(here `l1` is the dim room, `l5` the lit one). The physical constants below are plausible camera values
chosen so that the digits zoo spreads the 54 conditions over the mild, severe and extreme tiers of §3.3
(`perf/bench_recapture_tiers.py`); they are not fitted to the paper's accuracies.

Randomness: one `np.random.Generator` per (seed, image index) for the framing, shared by the 54
captures of an image (the camera stays on its tripod), and one per (seed, image index, condition) for
the capture itself (shake direction, noise, AWB error); both come from `np.random.SeedSequence`, so a
recapture depends only on (image, index, condition, seed), never on batch order or composition.

The module also holds the condition names `<lighting>-param_<k>` (`condition_name`, `parse_condition`),
the tier rule of §3.3 (`tier_of`: mild, severe, extreme by mean development accuracy) and the Syn-B
conditions (nine ImageNet-C types x severities 2 and 4, App. F).
"""
from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image
from scipy import ndimage, signal
from skimage.transform import ProjectiveTransform

from pipeline.perturb.compose import apply_step
from pipeline.perturb.registry import get_perturbation

# --------------------------------------------------------------------------------------------------
# the condition grid (ImageNet-ES param_control)
# --------------------------------------------------------------------------------------------------
ISOS = (250, 2000, 16000)
SHUTTERS = (1 / 4, 1 / 60, 1 / 1000)          # seconds
APERTURES = (5.0, 9.0, 16.0)                  # f-numbers
N_PARAMS = len(ISOS) * len(SHUTTERS) * len(APERTURES)
TIER_CUTS = (0.4, 0.2)          # mild: accuracy >= 0.4; severe: [0.2, 0.4); extreme: < 0.2 (Section 3.3)
TIERS = ("mild", "severe", "extreme")
_CONDITION = re.compile(r"^(?P<lighting>.+)-param_(?P<param>\d+)$")  # lighting or ES-Diverse environment


@dataclass(frozen=True)
class Lighting:
    """A room lighting level: target luminance scale, veiling glare (fraction of screen white) and the
    room light's colour relative to the camera's white-balance preset (per-channel RGB factors)."""

    name: str
    luminance: float
    glare: float
    colour: tuple[float, float, float]


LIGHTINGS: dict[str, Lighting] = {
    "l1": Lighting("l1", luminance=0.2, glare=0.003, colour=(1.12, 1.0, 0.82)),   # dim, warm lamp
    "l5": Lighting("l5", luminance=1.0, glare=0.01, colour=(1.03, 1.0, 0.95)),    # lit room
}


@dataclass(frozen=True)
class RecaptureCondition:
    """One capture condition: lighting level x camera setting `param` (1..27, ImageNet-ES numbering)."""

    lighting: str
    param: int
    shutter: float
    iso: int
    aperture: float

    @property
    def name(self) -> str:
        """The condition's name in record tables, e.g. "l1-param_7"."""
        return condition_name(self.lighting, self.param)

    @property
    def label(self) -> str:
        """A short human-readable camera setting, e.g. "ISO 250, 1/60 s, f/5"."""
        shutter = f"1/{round(1 / self.shutter)}" if self.shutter < 1 else f"{self.shutter:g}"
        return f"ISO {self.iso}, {shutter} s, f/{self.aperture:g}"


def condition_name(lighting: str, param: int) -> str:
    """The name of condition (lighting, param) shared by the simulated and the ImageNet-ES sources."""
    return f"{lighting}-param_{int(param)}"


def parse_condition(name: str) -> tuple[str, int] | None:
    """(lighting, param) of a condition named `<lighting>-param_<k>` (`condition_name`'s inverse); None for
    any other name (a Syn-B condition, say)."""
    match = _CONDITION.match(name)
    return None if match is None else (match["lighting"], int(match["param"]))


def camera_setting(param: int) -> tuple[float, int, float]:
    """(shutter s, ISO, f-number) of ImageNet-ES's `param_<param>`: ISO varies fastest, then shutter,
    then aperture (ImageNet-ES `settings/grid-options-3x3x3.csv`)."""
    if not 1 <= int(param) <= N_PARAMS:
        raise ValueError(f"param must lie in 1..{N_PARAMS}, got {param}")
    i = int(param) - 1
    return SHUTTERS[(i // 3) % 3], ISOS[i % 3], APERTURES[i // 9]


def make_condition(lighting: str, param: int) -> RecaptureCondition:
    """The condition (lighting, param) with its camera setting filled in."""
    shutter, iso, aperture = camera_setting(param)
    return RecaptureCondition(str(lighting), int(param), shutter, iso, aperture)


def recapture_conditions(lightings: Sequence[str] = tuple(LIGHTINGS)) -> list[RecaptureCondition]:
    """The 2 x 27 = 54 conditions, lighting-major, params 1..27 within each lighting."""
    return [make_condition(lighting, p) for lighting in lightings for p in range(1, N_PARAMS + 1)]


def tier_of(mean_accuracy: float, cuts: tuple[float, float] = TIER_CUTS) -> str:
    """Tier of a condition from its mean development accuracy across models (§3.3): mild >= 0.4,
    severe [0.2, 0.4), extreme < 0.2; the one tier rule of the code base."""
    return "mild" if mean_accuracy >= cuts[0] else "severe" if mean_accuracy >= cuts[1] else "extreme"


# --------------------------------------------------------------------------------------------------
# physical constants
# --------------------------------------------------------------------------------------------------
GAMUT = 0.85                  # chroma kept by the display's smaller gamut (1 = no compression)
BLACK_LEVEL = 0.002           # screen black as a fraction of white (500:1 contrast)
SUBPIXELS = 3                 # screen subpixels per image pixel and axis (RGB stripes)
MATRIX = 0.35                 # transmission of the dark matrix row between screen pixels
DEFOCUS = 10.0                # defocus blur radius at f/1, screen subpixels (radius = DEFOCUS / N)
DIFFRACTION = 0.03            # diffraction blur sigma per f-number unit, screen subpixels
SHAKE = 24.0                  # camera-shake speed, screen subpixels per second
SENSOR_SAMPLES = 3            # samples per axis over a sensor pixel's area (pixel integration)
CROP = 0.06                   # border fraction of the screen image cropped away by the framing
PERSPECTIVE = 0.02            # corner displacement s.d. as a fraction of the image side
SHIFT = 0.01                  # framing offset s.d. as a fraction of the image side
PHOTON_RATE = 4.0e6           # electrons per second per pixel at f/1 for screen white at luminance 1
FULL_WELL = 20000.0           # electrons at saturation
ISO_BASE = 100.0              # ISO at which a full well maps to output white
READ_NOISE = 3.0              # read noise, electrons (pre-gain)
ADC_NOISE = 0.6 / 255.0       # post-gain noise, fraction of full scale
AWB_ERROR = 0.02              # s.d. of the per-channel white-balance error of a capture
JPEG_QUALITY = 85             # camera JPEG quality (Pillow)
_LUMA = np.array([0.2126, 0.7152, 0.0722])
_TAG = 0x52454341             # "RECA": separates this source's streams from other users of SeedSequence


# --------------------------------------------------------------------------------------------------
# physical steps (float images in [0, 1], (H, W, 3))
# --------------------------------------------------------------------------------------------------
def srgb_to_linear(codes: np.ndarray) -> np.ndarray:
    """sRGB transfer function (IEC 61966-2-1): code values in [0, 1] -> linear light."""
    return np.where(codes <= 0.04045, codes / 12.92, ((codes + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(linear: np.ndarray) -> np.ndarray:
    """Inverse sRGB transfer function: linear light in [0, 1] -> code values (linear toe near black)."""
    linear = np.clip(linear, 0.0, 1.0)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def display_transfer(image: np.ndarray) -> np.ndarray:
    """uint8 image -> linear screen emission per image pixel (gamma decode, gamut, black level)."""
    linear = srgb_to_linear(image.astype(np.float64) / 255.0)  # the display's gamma decodes the code values
    luma = linear @ _LUMA
    linear = luma[..., None] + GAMUT * (linear - luma[..., None])  # gamut compression toward grey
    return BLACK_LEVEL + (1.0 - BLACK_LEVEL) * np.clip(linear, 0.0, 1.0)  # backlight leakage: black is not 0


def subpixel_mask(subpixels: int = SUBPIXELS) -> np.ndarray:
    """(s, s, 3) emission mask of one screen pixel: one vertical stripe per colour, a dark matrix row at
    the bottom; normalised so that every channel's mean over the pixel is 1."""
    if subpixels < 3 or subpixels % 3:
        raise ValueError(f"subpixels must be a positive multiple of 3 (one stripe per colour), got {subpixels}")
    mask = np.zeros((subpixels, subpixels, 3))
    stripe = subpixels // 3
    for c in range(3):
        mask[:, c * stripe : (c + 1) * stripe, c] = 1.0  # the vertical stripe of colour c
    mask[-1] *= MATRIX  # black matrix between pixel rows
    return mask / mask.mean(axis=(0, 1), keepdims=True)


def screen_mosaic(emission: np.ndarray, subpixels: int = SUBPIXELS) -> np.ndarray:
    """(H, W, 3) emission -> (sH, sW, 3) subpixel-resolution screen radiance (each pixel a stripe triplet)."""
    big = np.repeat(np.repeat(emission, subpixels, axis=0), subpixels, axis=1)  # pixel -> s x s subpixels
    h, w = emission.shape[:2]
    return big * np.tile(subpixel_mask(subpixels), (h, w, 1))


def illuminate(screen: np.ndarray, lighting: Lighting) -> np.ndarray:
    """Radiance leaving the screen: luminance scaled by the lighting plus the coloured veiling glare."""
    glare = lighting.glare * np.asarray(lighting.colour)  # room light reflected off the screen surface
    return lighting.luminance * (screen + glare)  # target luminance at the lens under this lighting level


def disk_kernel(radius: float, oversample: int = 8) -> np.ndarray:
    """Normalised pillbox of `radius` pixels with anti-aliased edges (the defocus point-spread function)."""
    half = int(np.ceil(radius)) + 1
    grid = (np.arange(-half * oversample, (half + 1) * oversample) + 0.5) / oversample - 0.5
    yy, xx = np.meshgrid(grid, grid, indexing="ij")
    fine = (yy ** 2 + xx ** 2 <= max(radius, 0.5) ** 2).astype(float)
    n = 2 * half + 1
    kernel = fine[: n * oversample, : n * oversample].reshape(n, oversample, n, oversample).sum(axis=(1, 3))
    return kernel / kernel.sum()


def motion_kernel(length: float, angle: float) -> np.ndarray:
    """Normalised linear motion-blur kernel of `length` pixels at `angle` radians (bilinear splats)."""
    half = int(np.ceil(length / 2)) + 1
    kernel = np.zeros((2 * half + 1, 2 * half + 1))
    steps = max(2, int(np.ceil(4 * length)) + 1)
    for t in np.linspace(-length / 2, length / 2, steps):
        y, x = half + t * np.sin(angle), half + t * np.cos(angle)
        y0, x0 = int(np.floor(y)), int(np.floor(x))
        fy, fx = y - y0, x - x0
        kernel[y0, x0] += (1 - fy) * (1 - fx)
        kernel[y0, x0 + 1] += (1 - fy) * fx
        kernel[y0 + 1, x0] += fy * (1 - fx)
        kernel[y0 + 1, x0 + 1] += fy * fx
    return kernel / kernel.sum()


def optics_psf(aperture: float, shutter: float, angle: float) -> np.ndarray:
    """The capture's point-spread function on the subpixel grid: defocus * shake, before diffraction."""
    defocus = disk_kernel(DEFOCUS / aperture)  # circle of confusion of a fixed focus error shrinks as 1/N
    shake = motion_kernel(SHAKE * shutter, angle)  # camera shake during the exposure: length ~ shutter time
    return signal.convolve2d(defocus, shake)


def blur(radiance: np.ndarray, psf: np.ndarray, aperture: float) -> np.ndarray:
    """Apply the point-spread function and diffraction (Gaussian, sigma ~ f-number) to each channel."""
    out = np.stack([signal.fftconvolve(np.pad(radiance[..., c], psf.shape[0] // 2, mode="edge"), psf, mode="valid")
                    for c in range(radiance.shape[-1])], axis=-1)
    return ndimage.gaussian_filter(out, sigma=(DIFFRACTION * aperture, DIFFRACTION * aperture, 0))  # Airy disk ~ λN


def framing(size: tuple[int, int], rng: np.random.Generator) -> ProjectiveTransform:
    """Homography from output pixel (col, row) to screen-image pixel coordinates: the border cropped by
    CROP, the image slightly shifted, each corner displaced (slight perspective)."""
    h, w = size
    out_corners = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]])
    centre = np.array([(w - 1) / 2, (h - 1) / 2])
    side = np.array([w, h], dtype=float)
    src = centre + (out_corners - centre) * (1.0 - 2 * CROP)  # crop the border, scale back to the frame
    src = src + rng.normal(0.0, SHIFT, 2) * side  # framing offset
    src = src + rng.normal(0.0, PERSPECTIVE, (4, 2)) * side  # slight perspective: corners move independently
    return ProjectiveTransform(matrix=homography(out_corners, src))


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 homography mapping four (x, y) points `src` onto `dst` (direct linear solve)."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst):
        rows += [[x, y, 1, 0, 0, 0, -x * u, -y * u], [0, 0, 0, x, y, 1, -x * v, -y * v]]
        rhs += [u, v]
    return np.append(np.linalg.solve(np.array(rows, dtype=float), np.array(rhs, dtype=float)), 1.0).reshape(3, 3)


def resample(radiance: np.ndarray, tform: ProjectiveTransform, size: tuple[int, int], subpixels: int = SUBPIXELS) -> np.ndarray:
    """Integrate the subpixel-grid radiance over each sensor pixel's area (SENSOR_SAMPLES^2 bilinear
    samples through `tform`): the sensor and screen pitches differ, so the subpixel stripes alias into
    moiré beats instead of averaging out. Outside the screen is dark."""
    h, w = size
    rows, cols = np.mgrid[0:h, 0:w]
    offsets = (np.arange(SENSOR_SAMPLES) + 0.5) / SENSOR_SAMPLES - 0.5
    out = np.zeros((h, w, radiance.shape[-1]))
    for dy in offsets:
        for dx in offsets:
            src = tform(np.column_stack([cols.ravel() + dx, rows.ravel() + dy]).astype(float))
            # image pixel (x, y) covers subpixels [s x, s x + s): its centre lies at s x + (s - 1) / 2
            coords = [src[:, 1] * subpixels + (subpixels - 1) / 2, src[:, 0] * subpixels + (subpixels - 1) / 2]
            for c in range(radiance.shape[-1]):
                out[..., c] += ndimage.map_coordinates(radiance[..., c], coords, order=1, mode="constant", cval=0.0).reshape(h, w)
    return out / SENSOR_SAMPLES ** 2


def expose(radiance: np.ndarray, condition: RecaptureCondition, rng: np.random.Generator) -> np.ndarray:
    """Sensor response in [0, 1]: shot noise on the collected electrons, read noise, full-well and ADC
    clipping, ISO gain. Noise at a fixed exposure rises with ISO."""
    electrons = PHOTON_RATE * condition.shutter / condition.aperture ** 2 * radiance  # exposure = t / N^2
    electrons = rng.poisson(np.maximum(electrons, 0.0)).astype(np.float64)  # photon shot noise (Poisson)
    electrons = electrons + rng.normal(0.0, READ_NOISE, electrons.shape)  # read noise before the gain
    electrons = np.minimum(electrons, FULL_WELL)  # full-well saturation
    signal_ = electrons * condition.iso / (ISO_BASE * FULL_WELL)  # ISO: analogue gain
    signal_ = signal_ + rng.normal(0.0, ADC_NOISE, signal_.shape)  # post-gain (ADC) noise
    return np.clip(signal_, 0.0, 1.0)  # ADC clipping: over- and under-exposure


def white_balance(raw: np.ndarray, lighting: Lighting, rng: np.random.Generator) -> np.ndarray:
    """Daylight preset under the room light: the light's colour cast times a small per-capture AWB error."""
    gains = np.asarray(lighting.colour) * (1.0 + rng.normal(0.0, AWB_ERROR, 3))  # white-balance shift
    return np.clip(raw * gains, 0.0, 1.0)


def encode(linear: np.ndarray, quality: int = JPEG_QUALITY) -> np.ndarray:
    """Camera tone curve (sRGB), 8-bit quantisation and JPEG round trip (Pillow)."""
    codes = np.clip(np.rint(255.0 * linear_to_srgb(linear)), 0, 255).astype(np.uint8)  # tone curve + 8 bits
    buffer = io.BytesIO()
    Image.fromarray(codes).save(buffer, format="JPEG", quality=quality)  # in-camera JPEG compression
    buffer.seek(0)
    return np.asarray(Image.open(buffer).convert("RGB"), dtype=np.uint8)


# --------------------------------------------------------------------------------------------------
# the recapture
# --------------------------------------------------------------------------------------------------
def _streams(seed: int, index: int, condition: RecaptureCondition) -> tuple[np.random.Generator, np.random.Generator]:
    """(framing stream of the image, capture stream of the image under the condition)."""
    if condition.lighting not in LIGHTINGS:
        raise ValueError(f"unknown lighting {condition.lighting!r}; valid lightings are {sorted(LIGHTINGS)}")
    lighting = sorted(LIGHTINGS).index(condition.lighting)
    frame = np.random.default_rng(np.random.SeedSequence([int(seed), int(index), _TAG]))
    capture = np.random.default_rng(np.random.SeedSequence([int(seed), int(index), _TAG, lighting, int(condition.param)]))
    return frame, capture


def recapture_one(image: np.ndarray, condition: RecaptureCondition, seed: int, index: int) -> np.ndarray:
    """One (H, W, 3) uint8 image recaptured under `condition`; `index` is its position in the source."""
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[-1] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got {image.dtype} {image.shape}")
    if camera_setting(condition.param) != (condition.shutter, condition.iso, condition.aperture):
        raise ValueError(f"condition {condition} does not match the camera setting of param_{condition.param}")
    frame_rng, rng = _streams(seed, index, condition)
    lighting = LIGHTINGS[condition.lighting]
    size = image.shape[:2]
    radiance = illuminate(screen_mosaic(display_transfer(image)), lighting)
    psf = optics_psf(condition.aperture, condition.shutter, rng.uniform(0.0, np.pi))
    sensor = resample(blur(radiance, psf, condition.aperture), framing(size, frame_rng), size)
    raw = expose(sensor, condition, rng)
    return encode(white_balance(raw, lighting, rng))


def recapture(images: np.ndarray, condition: RecaptureCondition, seed: int,
              indices: Sequence[int] | None = None) -> np.ndarray:
    """Recapture a stack (N, H, W, 3) uint8 under `condition`; image k is treated as source image
    `indices[k]` (default k), so any batch or order of the same images gives the same recaptures."""
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"expected (N, H, W, 3) uint8 images, got {images.dtype} {images.shape}")
    indices = np.arange(len(images)) if indices is None else np.asarray(indices)
    if indices.shape != (len(images),):
        raise ValueError(f"indices {indices.shape} must give one index per image ({len(images)})")
    if len(images) == 0:
        return images.copy()
    return np.stack([recapture_one(x, condition, seed, int(i)) for x, i in zip(images, indices)])


# --------------------------------------------------------------------------------------------------
# Syn-B: the 18 synthetic conditions on the same base images (§3.3, App. F)
# --------------------------------------------------------------------------------------------------
SYN_B_TYPES = ("brightness", "fog", "snow", "contrast", "jpeg_compression", "pixelate", "defocus_blur",
               "gaussian_noise", "motion_blur")  # App. F's order: brightness ... motion blur
SYN_B_SEVERITIES = (2, 4)


def syn_b_conditions() -> list[tuple[str, int]]:
    """The 18 Syn-B conditions as (registry name, severity), type-major in App. F's order, severity 2
    before 4 (the order of the records stage). Each name is checked against the perturbation registry."""
    out = []
    for name in SYN_B_TYPES:
        perturbation = get_perturbation(name)
        if perturbation.modality != "vision" or perturbation.max_level < max(SYN_B_SEVERITIES):
            raise ValueError(f"registry entry {name!r} is not a vision family with severities up to {max(SYN_B_SEVERITIES)}")
        out.extend((name, severity) for severity in SYN_B_SEVERITIES)
    return out


def apply_syn_b(images: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """Every Syn-B condition applied to `images`, keyed "<name>-<severity>", with the records stage's
    per-image seeds (`compose.apply_step`, prefix (severity,))."""
    return {f"{name}-{severity}": apply_step(get_perturbation(name), images, (severity,), seed)
            for name, severity in syn_b_conditions()}
