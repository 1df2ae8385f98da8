"""The DRPO loss against hand-computed values and gradients."""

import math

import pytest
import torch

from drtriton.train.drpo import (
    DRPOConfig,
    GRPOConfig,
    drpo_loss,
    grpo_advantages,
    grpo_loss,
    k3_kl,
    kl_penalty,
    log_mean_exp,
    sequence_scores,
    speed_weights,
    tie_near_fastest,  # fmt: skip
)

CFG = DRPOConfig()  # beta, tau, lambda, delta = 100, 5, 0.1, 0.001


def t(*xs, grad=False):
    return torch.tensor(xs, dtype=torch.float64, requires_grad=grad)


def test_sequence_scores_are_masked_means():
    logp = t(-1.0, -3.0, -100.0)[None].repeat(2, 1)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    assert sequence_scores(logp, mask).tolist() == [-2.0, -1.0]


def test_speed_weights_by_hand():
    w = speed_weights(t(0.1, 0.2, 5.0), torch.tensor([True, True, False]), lam=0.1)
    e1, e2 = math.exp(1.0), math.exp(2.0)
    assert w.tolist() == pytest.approx([e1 / (e1 + e2), e2 / (e1 + e2), 0.0])


def test_log_mean_exp_by_hand():
    s = t(-1.0, -2.0)
    assert float(log_mean_exp(s, 5.0)) == pytest.approx(
        5 * math.log((math.exp(-0.2) + math.exp(-0.4)) / 2)
    )
    assert float(log_mean_exp(t(-3.0), 5.0)) == pytest.approx(-3.0)


def test_mixed_group_value_and_gradient():
    scores = t(-1.0, -2.0, -0.5, -3.0, grad=True)
    correct = torch.tensor([True, True, False, False])
    speed = t(0.0, 0.1, 0.0, 0.0)
    loss, stats = drpo_loss(scores, correct, speed, torch.zeros(4), None, CFG)
    wa, wb = 1 / (1 + math.e), math.e / (1 + math.e)  # softmax(0/0.1, 0.1/0.1)
    ea, eb = math.exp(-0.5 / 5), math.exp(-3.0 / 5)
    lme = 5 * math.log((ea + eb) / 2)
    assert float(loss.detach()) == pytest.approx(-(wa * -1.0 + wb * -2.0 - lme))
    loss.backward()
    expected = [-wa, -wb, ea / (ea + eb), eb / (ea + eb)]
    assert scores.grad.tolist() == pytest.approx(expected)
    assert stats["groups_used"] == 1


def test_all_correct_group_contrasts_on_speed():
    scores = t(-1.0, -1.0, grad=True)
    loss, _ = drpo_loss(scores, torch.tensor([True, True]), t(0.0, 0.1), torch.zeros(2), None, CFG)
    loss.backward()
    wa, wb = 1 / (1 + math.e), math.e / (1 + math.e)
    # d(-J)/ds = softmax(s/tau) - w = 1/2 - w: the faster kernel goes up, the slower down.
    assert scores.grad.tolist() == pytest.approx([0.5 - wa, 0.5 - wb])
    assert float(loss.detach()) == pytest.approx(-(wa * -1 + wb * -1) + (-1.0))


def test_speed_margin_ties_the_near_fastest_by_hand():
    correct = torch.tensor([True, True, True, False])
    capped = tie_near_fastest(t(0.5, 0.3, -0.4, 0.0), correct, 0.3)
    assert capped.tolist() == pytest.approx([0.2, 0.2, -0.4, 0.0])  # cap = 0.5 - 0.3
    assert tie_near_fastest(t(0.5, 0.3), torch.tensor([True, True]), 0.0).tolist() == [0.5, 0.3]
    # In a mixed group the two near-fastest share the positive weight; the slow one gets e^-6.
    cfg = DRPOConfig(speed_margin=0.3)
    scores = t(-1.0, -2.0, -1.5, -3.0, grad=True)
    loss, _ = drpo_loss(scores, correct, t(0.5, 0.3, -0.4, 0.0), torch.zeros(4), None, cfg)
    loss.backward()
    z = 2 + math.exp(-6.0)
    assert scores.grad[:3].tolist() == pytest.approx([-1 / z, -1 / z, -math.exp(-6.0) / z])
    assert float(scores.grad[3]) == pytest.approx(1.0)  # the only incorrect output


def test_speed_margin_drops_an_all_correct_group_of_near_ties():
    scores = t(-1.0, -2.0, grad=True)
    both = torch.tensor([True, True])
    tied, stats = drpo_loss(scores, both, t(0.0, 0.2), torch.zeros(2), None,
                            DRPOConfig(speed_margin=0.25))  # fmt: skip
    assert float(tied.detach()) == 0.0 and stats["groups_used"] == 0
    _, stats = drpo_loss(scores, both, t(0.0, 0.5), torch.zeros(2), None,
                         DRPOConfig(speed_margin=0.25))  # fmt: skip
    assert stats["groups_used"] == 1  # 0.5 apart: the slower is still 0.25 below the cap


def test_all_correct_equal_speeds_and_all_wrong_are_dropped():
    scores = t(-1.0, -2.0, grad=True)
    for correct, speed in (([True, True], (0.0, 0.0)), ([False, False], (0.0, 0.0))):
        loss, stats = drpo_loss(scores, torch.tensor(correct), t(*speed), torch.zeros(2), None, CFG)
        assert float(loss.detach()) == 0.0 and stats["groups_used"] == 0
        loss.backward()
        assert scores.grad.tolist() == [0.0, 0.0]


def test_all_wrong_negatives_option_pushes_down():
    scores = t(-1.0, -2.0, grad=True)
    cfg = DRPOConfig(all_wrong="negatives")
    loss, _ = drpo_loss(
        scores, torch.tensor([False, False]), t(0.0, 0.0), torch.zeros(2), None, cfg
    )
    loss.backward()
    e1, e2 = math.exp(-0.2), math.exp(-0.4)
    assert scores.grad.tolist() == pytest.approx([e1 / (e1 + e2), e2 / (e1 + e2)])


def test_groups_are_averaged_over_contributing_ones():
    scores = t(-1.0, -2.0, -1.0, -2.0, grad=True)
    correct = torch.tensor([True, False, False, False])
    loss, stats = drpo_loss(scores, correct, torch.zeros(4, dtype=torch.float64),
                            torch.tensor([0, 0, 1, 1]), None, CFG)  # fmt: skip
    assert stats["groups_used"] == 1 and float(loss.detach()) == pytest.approx(-(-1.0 - -2.0))


def test_hinge_penalty_value_and_gradient():
    kl = t(0.003, grad=True)
    pen = kl_penalty(kl, beta=100.0, delta=0.001)
    assert float(pen.detach()) == pytest.approx(100 * 0.002**2)
    pen.backward()
    assert float(kl.grad) == pytest.approx(2 * 100 * 0.002)
    inside = t(0.0005, grad=True)
    kl_penalty(inside, 100.0, 0.001).backward()
    assert float(inside.grad) == 0.0


def test_penalty_enters_the_loss():
    scores = t(-1.0, -2.0)
    loss, stats = drpo_loss(scores, torch.tensor([True, False]), t(0.0, 0.0), torch.zeros(2),
                            t(0.011), CFG)  # fmt: skip
    assert float(loss.detach()) == pytest.approx(-(-1.0 - -2.0) + 100 * 0.01**2)
    assert stats["kl_penalty"] == pytest.approx(0.01)


def test_k3_kl_is_zero_on_policy_and_positive_off():
    logp = t(-1.0, -2.0)[None]
    mask = torch.ones(1, 2)
    assert float(k3_kl(logp, logp, mask)) == 0.0
    d = 0.1
    assert float(k3_kl(logp + d, logp, mask)) == pytest.approx(math.exp(d) - d - 1)


def test_nonfinite_speed_is_clipped():
    w = drpo_loss(t(-1.0, -1.0, grad=True), torch.tensor([True, True]),
                  t(float("inf"), float("nan")), torch.zeros(2), None, CFG)[0]  # fmt: skip
    assert math.isfinite(float(w.detach()))


def test_grpo_advantages_and_loss_gradient():
    correct = torch.tensor([True, False, True, True])
    adv = grpo_advantages(correct, torch.zeros(4), torch.tensor([0, 0, 1, 1]), GRPOConfig())
    assert adv[:2].tolist() == pytest.approx([1.0, -1.0], abs=1e-3)
    assert adv[2:].tolist() == [0.0, 0.0]
    logp = t(-1.0, -1.0, grad=True)[None].repeat(2, 1)
    loss, _ = grpo_loss(logp, logp.detach(), torch.ones(2, 2), adv[:2], GRPOConfig())
    grad = torch.autograd.grad(loss, logp)[0]
    assert grad[0].tolist() == pytest.approx([-0.25, -0.25], abs=1e-3)
