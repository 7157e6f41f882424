"""Fluid's understand_sentiment text CNN (embedding + sequence_conv_pool + fc softmax) on a
learnable synthetic variable-length task: the label says which of two word groups the
(single) sentiment word of a sentence comes from; the rest are neutral words."""

import numpy as np
from oar import fluid

VOCAB, POS, NEG = 60, range(1, 6), range(6, 11)


def _sentences(n, rng):
    data = []
    for _ in range(n):
        length = int(rng.integers(3, 12))
        words = rng.integers(11, VOCAB, size=length)
        label = int(rng.integers(0, 2))
        words[rng.integers(0, length)] = rng.choice(list(POS if label else NEG))
        data.append((words.tolist(), label))
    return data


def _convolution_net(data, label, input_dim, class_dim=2, emb_dim=16, hid_dim=16):
    emb = fluid.layers.embedding(input=data, size=[input_dim, emb_dim], is_sparse=True)
    conv_3 = fluid.nets.sequence_conv_pool(
        input=emb, num_filters=hid_dim, filter_size=3, act="tanh", pool_type="sqrt"
    )
    conv_4 = fluid.nets.sequence_conv_pool(
        input=emb, num_filters=hid_dim, filter_size=4, act="tanh", pool_type="max"
    )
    prediction = fluid.layers.fc(input=[conv_3, conv_4], size=class_dim, act="softmax")
    cost = fluid.layers.cross_entropy(input=prediction, label=label)
    avg_cost = fluid.layers.mean(cost)
    accuracy = fluid.layers.accuracy(input=prediction, label=label)
    return avg_cost, accuracy, prediction


def test_text_cnn_learns_variable_length_sentences():
    rng = np.random.default_rng(0)
    train, test = _sentences(512, rng), _sentences(200, rng)
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        words = fluid.data(name="words", shape=[None, 1], dtype="int64", lod_level=1)
        label = fluid.data(name="label", shape=[None, 1], dtype="int64")
        avg_cost, acc, _ = _convolution_net(words, label, VOCAB)
        test_program = main.clone(for_test=True)
        fluid.optimizer.Adagrad(learning_rate=0.05).minimize(avg_cost)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    exe.run(startup)
    feeder = fluid.DataFeeder(feed_list=[words, label], place=place)
    batch = 32
    for _ in range(4):
        for i in range(0, len(train), batch):
            exe.run(main, feed=feeder.feed(train[i : i + batch]), fetch_list=[avg_cost])
    (accuracy,) = exe.run(test_program, feed=feeder.feed(test), fetch_list=[acc])
    print("test accuracy", accuracy)
    assert float(np.asarray(accuracy).reshape(-1)[0]) > 0.9
