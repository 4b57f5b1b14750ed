"""The strong Wolfe line search of LBFGS(line_search_fn="strong_wolfe"): Nocedal and Wright's
Algorithms 3.5 (bracketing) and 3.6 (zoom) with safeguarded cubic interpolation, the rules
PyTorch's LBFGS uses (c1 = 1e-4, c2 = 0.9, at most 25 evaluations)."""
import math


def cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clipped
    to bounds (default: between x1 and x2); the bounds' midpoint when the cubic has none."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    square = d1 * d1 - g1 * g2
    if square < 0:
        return (low + high) / 2
    d2 = math.sqrt(square) * (1.0 if x2 >= x1 else -1.0)
    x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    return min(max(x, low), high)


def strong_wolfe(evaluate, dot, step, loss, grad, slope, tolerance_change=1e-9, c1=1e-4, c2=0.9,
                 max_evaluations=25):
    """A step t along the direction that satisfies the strong Wolfe conditions from the point
    whose loss, gradient and directional slope (gradient . direction, negative) are given.
    evaluate(t) -> (loss, gradient) at the point + t * direction; dot(gradient) -> its slope.
    Returns (loss, gradient, t, evaluations)."""
    new_loss, new_grad = evaluate(step)
    new_slope = dot(new_grad)
    evaluations = 1
    previous = (0.0, loss, grad, slope)  # (t, loss, gradient, slope) of the last trial
    bracket = None
    done = False
    while evaluations < max_evaluations:
        current = (step, new_loss, new_grad, new_slope)
        if new_loss > loss + c1 * step * slope or (evaluations > 1 and new_loss >= previous[1]):
            bracket = [previous, current]
            break
        if abs(new_slope) <= -c2 * slope:
            bracket, done = [current], True
            break
        if new_slope >= 0:
            bracket = [previous, current]
            break
        # Extrapolate: a longer step, at least 1% past this one and at most ten times it.
        next_step = cubic_minimum(previous[0], previous[1], previous[3], step, new_loss,
                                  new_slope, (step + 0.01 * (step - previous[0]), step * 10))
        previous, step = current, next_step
        new_loss, new_grad = evaluate(step)
        new_slope = dot(new_grad)
        evaluations += 1
    if bracket is None:
        bracket = [(0.0, loss, grad, slope), (step, new_loss, new_grad, new_slope)]
    # Zoom: shrink the bracket, keeping at `low` the end with the smaller loss.
    stalled = False
    low = 0 if len(bracket) == 1 or bracket[0][1] <= bracket[1][1] else 1
    while not done and evaluations < max_evaluations and len(bracket) == 2:
        ends = (bracket[0][0], bracket[1][0])
        if abs(ends[1] - ends[0]) < tolerance_change:
            break
        step = cubic_minimum(bracket[0][0], bracket[0][1], bracket[0][3], bracket[1][0],
                             bracket[1][1], bracket[1][3])
        # Safeguard: a trial within 10% of an end moves inward, once progress stalls.
        margin = 0.1 * (max(ends) - min(ends))
        if min(max(ends) - step, step - min(ends)) < margin:
            if stalled or step >= max(ends) or step <= min(ends):
                step = max(ends) - margin if abs(step - max(ends)) < abs(step - min(ends)) \
                    else min(ends) + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        new_loss, new_grad = evaluate(step)
        new_slope = dot(new_grad)
        evaluations += 1
        trial = (step, new_loss, new_grad, new_slope)
        high = 1 - low
        if new_loss > loss + c1 * step * slope or new_loss >= bracket[low][1]:
            bracket[high] = trial
            low = 0 if bracket[0][1] <= bracket[1][1] else 1
        else:
            if abs(new_slope) <= -c2 * slope:
                done = True
            elif new_slope * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = trial
    best = bracket[low]
    return best[1], best[2], best[0], evaluations
